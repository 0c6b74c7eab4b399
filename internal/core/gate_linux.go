//go:build linux

package core

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
)

// initGate makes fd w's gated fd (gate.go); watched says whether it is
// already an item of w's epoll instance.
func (w *waiter) initGate(fd int, watched bool) {
	g := &w.gate
	g.fd, g.armed, g.fixed = fd, watched, watched
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	g.armFn = func(epfd uintptr) {
		g.err = orInjected(ibv.GoSiteEpollArm, func() error { return unix.EpollCtl(int(epfd), unix.EPOLL_CTL_ADD, fd, &ev) })
		if g.err != nil {
			g.err = os.NewSyscallError("epoll_ctl", g.err)
		}
	}
	g.disarmFn = func(epfd uintptr) { g.err = unix.EpollCtl(int(epfd), unix.EPOLL_CTL_DEL, fd, nil) }
}
