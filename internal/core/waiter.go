package core

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// waiter parks goroutines in Go's runtime poller until an fd is readable,
// each with its own context.
//
// The runtime lets one reader of a file through at a time, and a read
// deadline belongs to the file, not to a reader. So one goroutine at a
// time, the parker, holds the turn: it sets the file's deadline from its
// own context and parks in the poller. Every other waiter waits on
// channels, with its own context: for the turn, for an arrival (broadcast
// waits), for close. A waiter therefore returns its context's error only
// when its own context is done, and the parker's deadline never reaches
// anyone else.
//
// Two kinds of wait use it:
//   - exclusive waits (rdma_cm events, connection requests) hand each
//     arrival to exactly one waiter: the parker returns with it and the
//     next waiter in line takes the turn;
//   - broadcast waits (completion events) end for every waiter at once: the
//     waiter that consumes an arrival calls arrived, which advances the
//     epoch and wakes the others, who return nil. Only the holder of the
//     turn consumes arrivals of a broadcast wait (see tryTurn), so the
//     parker can never sleep through one.
type waiter struct {
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool
	done   chan struct{} // closed by close
	turn   chan struct{} // capacity 1: full while a goroutine holds the turn

	mu     sync.Mutex
	epoch  epoch         // arrivals so far (broadcast waits)
	notify chan struct{} // closed when epoch advances; nil until a waiter needs one

	// The parker's (the holder of the turn's): what the read callback
	// checks, set by park, so that parking allocates nothing.
	pb     bool    // broadcast
	pe     epoch   // the epoch the wait began at
	pt     tryer   // the attempt
	pok    bool    // the attempt succeeded
	pq     quieter // set until the park's first callback: see quieter
	pcalls int     // callbacks of the current park
	readFn func(uintptr) bool
	// The park's cancellation, made once: cancelFn, given to
	// context.AfterFunc, sets the read deadline in the past and then
	// signals cancelled (capacity 1), which a park whose AfterFunc ran
	// receives before it returns.
	cancelFn  func()
	cancelled chan struct{}

	// sleeps counts the parks in a row that slept (their first look
	// found nothing), up to sleepsMax; a park whose first look ends the
	// wait restarts it. The holder of the turn's (fastDue).
	sleeps int

	// epoll: the fd is an epoll instance of the waiter's own
	// (newEpollWaiter), which watches every fd whose readiness ends the
	// waits; ready is epollReady's buffer.
	epoll bool
	ready [1]epollEvent

	gate gate // a completion waiter's: whether events reach the poller (gate.go)

	// thread: parks block a thread in epoll_wait instead of the runtime's
	// poller (WaitThread; threadwait_linux.go); nil in the default mode.
	thread *threadWait
}

// tryer is a wait's attempt: try reports whether the wait is over and runs
// only while its goroutine holds the turn; result is read right after a
// successful try, still holding it. A type with state of its own (a CQ)
// is one with nothing to allocate per wait.
type tryer interface {
	try() bool
	result() tryResult
}

// tryResult is what a successful attempt of a completion wait found.
type tryResult struct {
	q   *CQ // the CQ of the event (a shared channel's waits)
	err error
}

// quieter is a tryer that can tell, without a system call, whether only
// the readiness of an fd its waiter watches could end the wait now
// (quiet): nothing that is not announced on an fd, such as completions a
// post reaped into the stash, is waiting. A park on an epoll waiter then
// begins with one epoll_wait of its instance, which covers the completion
// channel and the connection's event fds at once, where the attempt would
// make a system call for each; only a ready fd runs the attempt. The
// runtime forgets readiness it saw before the park began (RawConn.Read
// resets it), which is why the park's first callback must look at all.
type quieter interface {
	quiet() bool
}

// armer is a tryer whose CQ may have been left disarmed (spin.go):
// prepark, called before the park sleeps, arms it and reports whether
// that already ended the wait (what the arming's poll found, or its
// failure), with result then telling the outcome.
type armer interface {
	prepark() bool
}

// tryFunc is a tryer whose result is in the function's own variables.
type tryFunc func() bool

func (f tryFunc) try() bool       { return f() }
func (tryFunc) result() tryResult { return tryResult{} }

// epoch counts the arrivals of a broadcast wait, by source: a shared
// completion channel counts its two CQs' events apart, so that a waiter
// woken by another's arrival can tell which CQ it was.
type epoch [2]uint64

// aLongTimeAgo is a deadline in the past: it wakes a blocked read at once.
var aLongTimeAgo = time.Unix(1, 0)

// newWaiter sets fd non-blocking and registers a dup of it with the
// poller.
func newWaiter(fd int, name string) (*waiter, error) {
	nfd, err := nonblockDup(fd)
	if err != nil {
		return nil, err
	}
	return wrapWaiter(nfd, name)
}

// wrapWaiter registers fd, which the waiter then owns, with the poller.
func wrapWaiter(fd int, name string) (*waiter, error) {
	f := os.NewFile(uintptr(fd), name)
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
	w := &waiter{f: f, rc: rc, done: make(chan struct{}), turn: make(chan struct{}, 1), gate: noGate,
		cancelled: make(chan struct{}, 1)}
	w.cancelFn = func() {
		w.f.SetReadDeadline(aLongTimeAgo)
		w.cancelled <- struct{}{}
	}
	w.readFn = func(fd uintptr) bool {
		w.pcalls++
		if w.pb && w.advanced(w.pe) {
			return true
		}
		if q := w.pq; q != nil {
			w.pq = nil
			if q.quiet() && !w.epollReady(int(fd)) {
				return false
			}
		}
		w.pok = w.pt.try()
		return w.pok
	}
	return w, nil
}

// tryTurn takes the turn if nobody holds it. The holder must release it.
func (w *waiter) tryTurn() bool {
	select {
	case w.turn <- struct{}{}:
		return true
	default:
		return false
	}
}

// release gives the turn back.
func (w *waiter) release() { <-w.turn }

// epochNow returns the arrivals so far.
func (w *waiter) epochNow() epoch {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epoch
}

// arrived records an arrival of a broadcast wait from source i (0 or 1)
// and wakes every waiter that began before it. Only the holder of the turn
// calls it (it consumed the arrival).
func (w *waiter) arrived(i int) {
	w.gateEventRead()
	w.mu.Lock()
	w.epoch[i]++
	if w.notify != nil {
		close(w.notify)
		w.notify = nil
	}
	w.mu.Unlock()
}

// since returns nil when an arrival happened after epoch e, else the
// channel that the next arrival closes.
func (w *waiter) since(e epoch) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.epoch != e {
		return nil
	}
	if w.notify == nil {
		w.notify = make(chan struct{})
	}
	return w.notify
}

// advanced reports whether an arrival happened after epoch e.
func (w *waiter) advanced(e epoch) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epoch != e
}

// wait waits until t.try reports true, parking in the poller while the fd
// is not readable; t.try runs only while this goroutine holds the turn,
// and then wait returns t.result(). With broadcast, it also returns (a
// zero result) once an arrival happened after epoch e (from epochNow,
// taken before the caller's own first try). It returns ctx.Err() when
// ctx ends first, and os.ErrClosed when the waiter is closed meanwhile.
// Parking with a context that has no Done channel allocates nothing.
func (w *waiter) wait(ctx context.Context, broadcast bool, e epoch, t tryer) (tryResult, error) {
	if err := ctx.Err(); err != nil {
		return tryResult{}, err
	}
	if w.closed.Load() {
		return tryResult{}, os.ErrClosed
	}
	if broadcast && w.advanced(e) {
		return tryResult{}, nil
	}
	if !w.tryTurn() {
		var arrival <-chan struct{} // nil: never ready in the select
		if broadcast {
			if arrival = w.since(e); arrival == nil {
				return tryResult{}, nil
			}
		}
		select {
		case w.turn <- struct{}{}:
		case <-arrival:
			return tryResult{}, nil
		case <-ctx.Done():
			return tryResult{}, ctx.Err()
		case <-w.done:
			return tryResult{}, os.ErrClosed
		}
	}
	res, err := w.park(ctx, broadcast, e, t)
	w.release()
	return res, err
}

// park is wait for the holder of the turn. The context's end wakes it
// through the file's read deadline, set in the past by context.AfterFunc
// once ctx is done; not from ctx's deadline directly, whose timer may fire
// before ctx's own (a wait must return its context's error only once its
// context is done).
func (w *waiter) park(ctx context.Context, broadcast bool, e epoch, t tryer) (tryResult, error) {
	if w.closed.Load() {
		return tryResult{}, os.ErrClosed
	}
	if a, ok := t.(armer); ok && a.prepark() {
		return t.result(), nil
	}
	if w.thread != nil {
		return w.parkThread(ctx, broadcast, e, t)
	}
	if err := w.f.SetReadDeadline(time.Time{}); err != nil {
		if w.closed.Load() {
			return tryResult{}, os.ErrClosed
		}
		return tryResult{}, err
	}
	if err := w.gateArm(); err != nil {
		if w.closed.Load() {
			return tryResult{}, os.ErrClosed
		}
		return tryResult{}, err
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, w.cancelFn)
	}
	w.pb, w.pe, w.pt, w.pok, w.pcalls = broadcast, e, t, false, 0
	if q, ok := t.(quieter); ok && w.epoll {
		w.pq = q
	}
	err := w.rc.Read(w.readFn)
	switch {
	case w.pcalls > 1: // slept
		w.sleeps = min(w.sleeps+1, sleepsMax)
	case w.pok: // found at the first look
		w.sleeps = 0
	}
	w.gate.unparked = 0
	var res tryResult
	if err == nil && w.pok {
		res = t.result()
	}
	w.pt, w.pq = nil, nil
	if stop != nil && !stop() {
		<-w.cancelled // the AfterFunc ran: let it finish before the next parker
	}
	if err == nil {
		return res, nil
	}
	if w.closed.Load() {
		// RawConn reports internal/poll's "use of closed file".
		return tryResult{}, os.ErrClosed
	}
	if cerr := ctx.Err(); cerr != nil {
		return tryResult{}, cerr
	}
	return tryResult{}, err
}

// fastDue reports whether a completion wait's fast path (an attempt to
// read an event before parking: one system call) is worth making: not
// while waits keep sleeping in the park, where completions come after the
// wait began (a wire, hardware, rxe on 6.12), since a park's first
// callback looks again anyway (quieter). Once a park finds its event at
// that first look, the fast path is back. Only the holder of the turn
// calls it.
func (w *waiter) fastDue() bool { return w.sleeps < sleepsMax }

// close wakes every waiter (they return os.ErrClosed) and closes the
// waiter's fd; it never touches the fd the waiter watches (a dup's
// original, an epoll's members). It is idempotent and nil-safe.
func (w *waiter) close() {
	if w != nil && w.closed.CompareAndSwap(false, true) {
		close(w.done)
		w.f.Close()
		w.thread.close()
	}
}
