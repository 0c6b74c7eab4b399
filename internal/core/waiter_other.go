//go:build !linux

package core

import "github.com/gorpma/rpma/internal/ibv"

// newEpollWaiter is not available on this system.
func newEpollWaiter(string, int, ...int) (*waiter, error) { return nil, ibv.ErrNotSupported }

// newEpoll is not available on this system.
func newEpoll(int, ...int) (int, error) { return -1, ibv.ErrNotSupported }

// newEventFD is not available on this system.
func newEventFD() (int, error) { return -1, ibv.ErrNotSupported }

func signalEventFD(int) {}

func drainEventFD(int) {}

func closeFD(int) {}
