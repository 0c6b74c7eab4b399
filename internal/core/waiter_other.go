//go:build !linux

package core

import (
	"context"

	"github.com/gorpma/rpma/internal/ibv"
)

// newEpollWaiter is not available on this system.
func newEpollWaiter(string, bool, int, ...int) (*waiter, error) { return nil, ibv.ErrNotSupported }

// epollEvent stands for epoll_wait's result item.
type epollEvent struct{}

// epollReady cannot tell on this system: the caller looks for itself.
func (w *waiter) epollReady(int) bool { return true }

// newEpoll is not available on this system.
func newEpoll(int, ...int) (int, error) { return -1, ibv.ErrNotSupported }

// newEventFD is not available on this system.
func newEventFD() (int, error) { return -1, ibv.ErrNotSupported }

func signalEventFD(int) {}

func drainEventFD(int) {}

func closeFD(int) {}

// threadWait stands for WaitThread's parking, not available on this
// system.
type threadWait struct{}

func (*threadWait) close() {}

// startThreadWaits is not available on this system.
func (w *waiter) startThreadWaits(*ibv.CompChannel, ...int) error { return ibv.ErrNotSupported }

// parkThread is never reached on this system (startThreadWaits fails).
func (w *waiter) parkThread(context.Context, bool, epoch, tryer) (tryResult, error) {
	return tryResult{}, ibv.ErrNotSupported
}
