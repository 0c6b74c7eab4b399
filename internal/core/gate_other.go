//go:build !linux

package core

// initGate is not needed on this system: it has no epoll waiters.
func (w *waiter) initGate(int, bool) {}
