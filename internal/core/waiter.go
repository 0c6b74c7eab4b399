package core

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waiter parks goroutines in Go's runtime poller until an fd is readable.
// It owns a dup of the fd, wrapped with os.NewFile; the original fd stays
// with its C object and is the one the C calls read.
type waiter struct {
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool
}

// aLongTimeAgo is a deadline in the past: it wakes a blocked read at once.
var aLongTimeAgo = time.Unix(1, 0)

// newWaiter sets fd non-blocking (which its dup shares: O_NONBLOCK belongs
// to the open file description) and registers a dup with the poller.
func newWaiter(fd int, name string) (*waiter, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(nfd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	// A file the poller does not support rejects deadlines; waits on it
	// could not be cancelled.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, err
	}
	return &waiter{f: f, rc: rc}, nil
}

// wait calls try until it reports true, parking the goroutine in the poller
// while the fd is not readable. It returns ctx.Err() when ctx ends first,
// and an error matching os.ErrClosed when the waiter is closed meanwhile.
func (w *waiter) wait(ctx context.Context, try func() bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.closed.Load() {
		return os.ErrClosed
	}
	dl, _ := ctx.Deadline() // zero: no deadline
	if err := w.f.SetReadDeadline(dl); err != nil {
		if w.closed.Load() {
			return os.ErrClosed
		}
		return err
	}
	var fired chan struct{}
	stop := func() bool { return true }
	if ctx.Done() != nil {
		fired = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			w.f.SetReadDeadline(aLongTimeAgo)
			close(fired)
		})
	}
	err := w.rc.Read(func(uintptr) bool { return try() })
	if !stop() {
		<-fired // the AfterFunc ran: let it finish before the next wait
	}
	if err == nil {
		return nil
	}
	if w.closed.Load() {
		// RawConn reports internal/poll's "use of closed file".
		return os.ErrClosed
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The poller's deadline fired just before ctx noticed its own.
		return context.DeadlineExceeded
	}
	return err
}

// close closes the dup, waking every blocked wait; it never touches the
// original fd. It is idempotent.
func (w *waiter) close() {
	if w != nil && w.closed.CompareAndSwap(false, true) {
		w.f.Close()
	}
}
