//go:build linux

package core

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
)

// threadWait is how a completion waiter parks in WaitThread mode: the
// holder of the turn blocks its thread in epoll_wait(2) on an epoll
// instance of its own, which Go's runtime poller never sees, until the
// completion channel, the connection's events or a cancellation fd is
// ready. A completion event then wakes exactly the thread that waits for
// it, as in librpma's rpma_cq_wait (a blocking read of the channel),
// and not the runtime's poller thread first; the price is a thread
// blocked per parked waiter (the runtime hands the goroutine's P to
// another thread meanwhile).
//
// The instance watches the channel level-triggered (reading the event
// ends its readiness), the connection's event channel and its termFD
// edge-triggered (both may stay readable while a wait must go on: events
// kept for NextEvent, the end's flush window), and an eventfd of its own,
// cancel, that the park's context and close write. Both files are
// blocking and wrapped in os.File only for their reference counts: the
// park holds them through RawConn.Control, so that a concurrent close
// (waiter.close) cannot free the fd numbers under a blocked epoll_wait.
// Everything but cancel is the holder of the turn's.
type threadWait struct {
	ep     *os.File
	eprc   syscall.RawConn
	cancel *os.File
	crc    syscall.RawConn

	ch        *ibv.CompChannel
	epfd, efd int  // ep's and cancel's fds, used only while held (Control)
	connSeen  bool // a connection fd was ready during a park that ended otherwise: the next park looks
	one, buf  [8]byte

	// The last wait's outcome (ibv.CompChannel.WaitCQEvent): which
	// fds were ready, the event read (got: ref, and its read's error
	// evErr), epoll_wait's failure (err); read tells it whether to read
	// the event, rearm and ack how (eventTaker.readArgs).
	read  bool
	rearm bool
	ack   int
	ready ibv.WaitReady
	ref   ibv.CQRef
	got   bool
	evErr error
	err   error

	sleeps atomic.Uint64 // epoll_waits made: for tests
	took   atomic.Uint64 // events read in the crossing that waited: for tests

	waitFn, holdFn func(uintptr) // prebuilt Control callbacks: a park allocates nothing
	cancelFn       func()        // the park's context.AfterFunc
}

// startThreadWaits makes w park in WaitThread mode: an epoll instance of
// its own watching chFD (the completion channel, already non-blocking)
// and connFDs (the connection's event fds; -1s are skipped), and a
// cancellation eventfd. w's gate is never armed then: completion events
// never reach the runtime's poller.
func (w *waiter) startThreadWaits(ch *ibv.CompChannel, connFDs ...int) error {
	chFD := ch.FD()
	// Not fault-injection sites: the replay (internal/inject) counts each
	// site once in the sources and reaches every one, and its sequences
	// make no WaitThread connection.
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return os.NewSyscallError("eventfd", err)
	}
	fail := func(err error) error {
		unix.Close(epfd)
		unix.Close(efd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	add := func(fd int, events uint32) error {
		if fd < 0 {
			return nil
		}
		return unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)})
	}
	if err := add(chFD, unix.EPOLLIN); err != nil {
		return fail(err)
	}
	if err := add(efd, unix.EPOLLIN); err != nil {
		return fail(err)
	}
	for _, fd := range connFDs {
		if err := add(fd, unix.EPOLLIN|unix.EPOLLET); err != nil {
			return fail(err)
		}
	}
	tw := &threadWait{ep: os.NewFile(uintptr(epfd), "epoll"), cancel: os.NewFile(uintptr(efd), "eventfd"),
		ch: ch, epfd: epfd, efd: efd}
	tw.one[0] = 1 // a non-zero count in either byte order
	if tw.eprc, err = tw.ep.SyscallConn(); err == nil {
		tw.crc, err = tw.cancel.SyscallConn()
	}
	if err != nil {
		tw.ep.Close()
		tw.cancel.Close()
		return err
	}
	// waitFn holds the epoll fd, holdFn the eventfd, for epoll_wait.
	tw.waitFn = func(uintptr) {
		if err := tw.crc.Control(tw.holdFn); err != nil {
			tw.ready, tw.got, tw.err = 0, false, err
		}
	}
	tw.holdFn = func(uintptr) {
		tw.ready, tw.ref, tw.got, tw.err = tw.ch.WaitCQEvent(tw.epfd, tw.efd, tw.read, tw.rearm, tw.ack)
		if tw.got {
			tw.evErr, tw.err = tw.err, nil
		}
	}
	tw.cancelFn = func() {
		tw.cancel.Write(tw.one[:])
		w.cancelled <- struct{}{}
	}
	w.thread = tw
	return nil
}

// eventTaker is a tryer whose park can read its channel's event itself
// (WaitThread: in the crossing that waits) and hand it over: tookEvent
// ends the wait as try would have after reading it.
type eventTaker interface {
	tookEvent(ref ibv.CQRef, err error) bool
	readArgs() (rearm bool, ack int)
}

// parkThread is park in WaitThread mode: each round is one crossing that
// blocks in epoll_wait and reads the channel's event when it is ready
// (ibv.CompChannel.WaitCQEvent). Its first look runs the attempt
// only when something other than an fd could end the wait (quieter) or a
// connection fd was ready before (connSeen); the channel's readiness is
// level-triggered, so an event that came before the park ends
// epoll_wait at once.
func (w *waiter) parkThread(ctx context.Context, broadcast bool, e epoch, t tryer) (tryResult, error) {
	tw := w.thread
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, tw.cancelFn)
	}
	q, _ := t.(quieter)
	taker, _ := t.(eventTaker)
	tw.read = taker != nil
	ok, slept, cancelled := false, false, false
	var err error
	look := q == nil || !q.quiet() || tw.connSeen
	tw.connSeen = false
	for !ok && err == nil && !cancelled {
		if broadcast && w.advanced(e) {
			break
		}
		if look {
			if ok = t.try(); ok {
				break
			}
		}
		slept = true
		tw.sleeps.Add(1)
		if taker != nil {
			tw.rearm, tw.ack = taker.readArgs()
		}
		if cerr := tw.eprc.Control(tw.waitFn); cerr != nil {
			err = cerr
			break
		}
		if tw.err != nil {
			err = tw.err
			break
		}
		if tw.ready&ibv.ReadyOther != 0 {
			tw.connSeen = true
		}
		if tw.ready&ibv.ReadyCancel != 0 {
			if w.closed.Load() || ctx.Err() != nil {
				cancelled = true
				break
			}
			tw.cancel.Read(tw.buf[:]) // a write nobody drained: not this park's
		}
		if tw.got {
			tw.took.Add(1)
			if ok = taker.tookEvent(tw.ref, tw.evErr); ok {
				break
			}
			continue // a stale event: the taker armed the CQ again
		}
		// Ready without an event read: a connection fd, or an event
		// another reader took. The attempt looks.
		look = tw.ready != 0
	}
	if slept {
		w.sleeps = min(w.sleeps+1, sleepsMax)
	} else if ok {
		w.sleeps = 0
	}
	var res tryResult
	if ok {
		res = t.result()
	}
	if stop != nil && !stop() {
		<-w.cancelled // the AfterFunc ran: its write is to be read
		tw.cancel.Read(tw.buf[:])
	}
	switch {
	case ok:
		return res, nil
	case w.closed.Load() || errors.Is(err, os.ErrClosed):
		return tryResult{}, os.ErrClosed
	case ctx.Err() != nil:
		return tryResult{}, ctx.Err()
	case err != nil:
		return tryResult{}, err
	}
	return res, nil // an arrival of a broadcast wait
}

// closeThread wakes a park blocked in epoll_wait and releases the fds
// (once no park holds them). Called by close, once.
func (tw *threadWait) close() {
	if tw == nil {
		return
	}
	tw.cancel.Write(tw.one[:])
	tw.ep.Close()
	tw.cancel.Close()
}
