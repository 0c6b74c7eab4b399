//go:build linux

package core

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
)

// newEpollWaiter registers with the poller an epoll instance that watches
// fds (each set non-blocking) for input, so that one wait covers several
// channels: a completion channel (gated, set non-blocking but watched only
// while waits park: gate.go) and the connection's event channel. The
// waiter owns the epoll fd; the watched fds stay with their C objects.
// Without gating (Tuning.NoGate) the completion channel is watched from
// the start, for good.
func newEpollWaiter(name string, gating bool, gated int, fds ...int) (*waiter, error) {
	watched, unwatched := fds, gated
	if !gating {
		watched, unwatched = append([]int{gated}, fds...), -1
	}
	epfd, err := newEpoll(unwatched, watched...)
	if err != nil {
		return nil, err
	}
	w, err := wrapWaiter(epfd, name)
	if err != nil {
		return nil, err
	}
	w.initGate(gated, unwatched < 0)
	w.epoll = true
	return w, nil
}

// epollEvent is an item of epoll_wait's result.
type epollEvent = unix.EpollEvent

// epollReady reports whether the waiter's epoll instance epfd has a ready
// fd, or could not tell: then the caller must look for itself. Its
// failure is not a fault-injection site, as the gate's EPOLL_CTL_DEL is
// not: it costs the attempt's system calls and loses nothing.
func (w *waiter) epollReady(epfd int) bool {
	n, err := unix.EpollWait(epfd, w.ready[:], 0)
	return err != nil || n > 0
}

// newEpoll returns a non-blocking epoll instance watching fds for input,
// level-triggered. It sets them non-blocking, and unwatched too, which it
// does not add (negative ones are skipped).
func newEpoll(unwatched int, fds ...int) (int, error) {
	epfd, err := -1, injected(ibv.GoSiteEpollCreate1)
	if err == nil {
		epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	}
	if err != nil {
		return -1, os.NewSyscallError("epoll_create1", err)
	}
	fail := func(call string, err error) (int, error) {
		unix.Close(epfd)
		return -1, os.NewSyscallError(call, err)
	}
	for _, fd := range append([]int{unwatched}, fds...) {
		if fd < 0 {
			continue
		}
		if err := orInjected(ibv.GoSiteFcntlWatched, func() error { return unix.SetNonblock(fd, true) }); err != nil {
			return fail("fcntl", err)
		}
		if fd == unwatched {
			continue
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := orInjected(ibv.GoSiteEpollCtl, func() error { return unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev) }); err != nil {
			return fail("epoll_ctl", err)
		}
	}
	if err := orInjected(ibv.GoSiteFcntlEpoll, func() error { return unix.SetNonblock(epfd, true) }); err != nil {
		return fail("fcntl", err)
	}
	return epfd, nil
}

// newEventFD returns a non-blocking eventfd.
func newEventFD() (int, error) {
	if err := injected(ibv.GoSiteEventfd); err != nil {
		return -1, err
	}
	return unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
}

// signalEventFD makes fd readable until drainEventFD.
func signalEventFD(fd int) {
	var one [8]byte
	one[0] = 1 // a non-zero count in either byte order
	unix.Write(fd, one[:])
}

// drainEventFD makes fd unreadable again (it resets the count).
func drainEventFD(fd int) {
	var b [8]byte
	unix.Read(fd, b[:])
}

// closeFD closes fd if it is not negative.
func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}
