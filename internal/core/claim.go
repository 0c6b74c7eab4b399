package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// Claims: completions that go to one waiting caller only.
//
// The mirror hands a CQ's completions to whoever polls first (GetWC), so
// two goroutines waiting on one CQ can take each other's. A claim binds
// one completion to one waiting call instead, whoever polls it:
//
//   - a request claim rides in the queue slot of a request the library
//     posts for a caller that waits for it (the per-operation calls,
//     opwait.go): the completion that retires that slot is the claim's,
//     and the completions of the request's other slots (the write before
//     a flush) are absorbed;
//   - an op-context claim (CQ.WaitFor) takes the first completion
//     carrying its op context: one already in the stash when the claim
//     opens, else the first polled after.
//
// A claimed completion never reaches the stash, so GetWC never returns
// it. Claims live under the CQ's data lock and are reused through a
// pool. A claim whose caller stopped waiting (its context ended, the
// connection closed) is abandoned: a request claim stays with its slot
// until the completion comes and then goes back to the pool, so the
// completion is never delivered to a later claim.
//
// Waiting. Whoever polls a claimed completion (a post's reap, GetWC, a
// wait) delivers it and wakes its owner alone, through the claim's own
// channel: one wake-up per completion, none when the owner found it
// itself. One waiter at a time holds the turn of the CQ's waiter (its
// own channel's, or the connection's shared one's), the only one that
// reads completion events: it parks in the poller with its claim as the
// tryer, and after each event it polls, which delivers everyone's
// completions. Every completion raises an event (the CQ is armed
// whenever no event is pending), so the holder wakes for each; a waiter
// that takes the turn polls before it parks, so completions polled by
// nobody while the turn was free are found.
//
// Room. A per-operation call whose post finds its queue or CQ full waits
// for room in a FIFO queue of the CQ (roomq): polls that retire slots
// wake the waiters at its head whose room is there, in order, and a new
// call does not overtake waiting ones.
type opClaim struct {
	q         *CQ
	ctx       uint64 // op-context claims: the op context; request claims: what the completion reports
	done      bool   // wc holds the claimed completion
	abandoned bool   // nobody waits for it any more
	byCtx     bool   // an op-context claim
	wc        WC
	need      uint64 // while waiting for room: the slots wanted
	recv      bool   // ... in the receive queue (else the send queue)
	queued    bool   // in q.roomq
	promised  uint64 // woken for room: the slots promised to it until it posts (q.promised)
	op        string // the waiting call, for errors
	werr      error  // the outcome of the holder's attempt (try)
	// A claim handed out as a Pending (opasync.go): gen counts its uses
	// (it changes when the claim goes back to the pool), taken is set
	// once its Pending's Wait began.
	gen   atomic.Uint32
	taken bool

	// Submission combining (combine.go): a waiting call's request on its
	// connection's combining list, posted by whoever holds the data lock
	// next, and the outcome of that post. combine is set by runWait when
	// other calls are in progress; combined when the post took the
	// combining path (which yields).
	combine  bool
	combined bool
	next     *opClaim    // the combining list's link
	req      sendArgs    // the request
	reqCtx   uint64      // its op context
	reqFlush bool        // a write followed by the emulated flush's read
	decided  atomic.Bool // postErr holds the outcome of its post
	postErr  error       // nil: posted; else why not

	wake chan struct{} // capacity 1: a delivery, or room, for this claim

	// Prebuilt for the wait's end check, so that a wait allocates nothing.
	settleFn func() bool
	flushFn  func(error) bool
}

// claimPool reuses claims across CQs: a claim is plain state, and it
// keeps its channel and prebuilt functions.
var claimPool = sync.Pool{New: func() any { return new(opClaim) }}

// newClaim returns a fresh claim for a caller of q.
func (q *CQ) newClaim(op string) *opClaim {
	cl := claimPool.Get().(*opClaim)
	if cl.wake == nil {
		cl.wake = make(chan struct{}, 1)
		cl.settleFn, cl.flushFn = cl.settle, cl.flushDue
	}
	cl.q, cl.op = q, op
	return cl
}

// freeClaim gives cl back to the pool; nothing may refer to it any more.
func (q *CQ) freeClaim(cl *opClaim) {
	select {
	case <-cl.wake:
	default:
	}
	gen := cl.gen.Load()
	*cl = opClaim{wake: cl.wake, settleFn: cl.settleFn, flushFn: cl.flushFn}
	cl.gen.Store(gen + 1)
	claimPool.Put(cl)
}

// signal wakes cl's owner if it waits; a wake-up nobody waits for yet
// stays in the channel.
func (cl *opClaim) signal() {
	select {
	case cl.wake <- struct{}{}:
	default:
	}
}

// flushDue is the flushed-completions check (endflush.go) of the channel
// cl waits on.
func (cl *opClaim) flushDue(cause error) bool {
	if sc := cl.q.sc; sc != nil {
		return sc.flushDue(cause)
	}
	return cl.q.flushDue(cause)
}

// openCtxClaim opens an op-context claim for ctx (dl held): the first
// completion with ctx in the stash is its at once, else it waits among
// q.claims for the first one polled.
func (q *CQ) openCtxClaim(op string, ctx uint64) *opClaim {
	cl := q.newClaim(op)
	cl.ctx, cl.byCtx = ctx, true
	for i := 0; i < q.n; i++ {
		if q.stash[i].OpContext == ctx {
			cl.wc, cl.done = q.stash[i], true
			q.n = i + copy(q.stash[i:], q.stash[i+1:q.n])
			return cl
		}
	}
	q.claims = append(q.claims, cl)
	return cl
}

// deliverCtx hands the completions in the stash from index from on that
// open op-context claims wait for to those claims, oldest claim first,
// and removes them from the stash (dl held).
func (q *CQ) deliverCtx(from int) {
	k := from
	for i := from; i < q.n; i++ {
		if cl := q.takeCtxClaim(q.stash[i].OpContext); cl != nil {
			cl.wc, cl.done = q.stash[i], true
			cl.signal()
			continue
		}
		if k != i {
			q.stash[k] = q.stash[i]
		}
		k++
	}
	q.n = k
}

// takeCtxClaim removes and returns the oldest open claim for ctx, nil if
// none (dl held).
func (q *CQ) takeCtxClaim(ctx uint64) *opClaim {
	for j, cl := range q.claims {
		if cl.ctx == ctx {
			q.dropCtxClaim(j)
			return cl
		}
	}
	return nil
}

// dropCtxClaim removes q.claims[j] (dl held).
func (q *CQ) dropCtxClaim(j int) {
	last := len(q.claims) - 1
	copy(q.claims[j:], q.claims[j+1:])
	q.claims[last] = nil
	q.claims = q.claims[:last]
}

// deliverSlot gives w, the completion of a claimed request, to its claim
// and wakes its owner (dl held), or frees an abandoned claim.
func (q *CQ) deliverSlot(cl *opClaim, w *WC) {
	if cl.abandoned {
		q.freeClaim(cl)
		return
	}
	cl.wc = *w
	cl.wc.OpContext = cl.ctx
	cl.done = true
	cl.signal()
}

// closeClaim ends the caller's interest in cl (dl held): a claim that is
// done, waiting among the op-context claims or waiting for room goes
// back to the pool; a request claim still outstanding is abandoned, and
// freed when its completion comes.
func (q *CQ) closeClaim(cl *opClaim) {
	if q.dropPromise(cl) {
		defer q.wakeRoom() // the room it gives back
	}
	switch {
	case cl.done:
		q.freeClaim(cl)
	case cl.byCtx:
		for j, c := range q.claims {
			if c == cl {
				q.dropCtxClaim(j)
				break
			}
		}
		q.freeClaim(cl)
	case cl.need > 0: // a wait for room: nothing posted
		q.leaveRoomQueue(cl)
		q.freeClaim(cl)
	default:
		cl.abandoned = true
	}
}

// queueForRoom puts cl, which wants need slots of its queue, at the end
// of the room queue, or back at its head when it was woken for room a
// later caller took (dl held).
func (q *CQ) queueForRoom(cl *opClaim, need uint64, recv bool, head bool) {
	cl.need, cl.recv = need, recv
	if cl.queued {
		return
	}
	cl.queued = true
	if head {
		q.roomq = append(q.roomq, nil)
		copy(q.roomq[1:], q.roomq)
		q.roomq[0] = cl
	} else {
		q.roomq = append(q.roomq, cl)
	}
	q.roomWaiters.Store(int32(len(q.roomq)))
}

// leaveRoomQueue takes cl out of the room queue (dl held).
func (q *CQ) leaveRoomQueue(cl *opClaim) {
	if !cl.queued {
		return
	}
	for j, c := range q.roomq {
		if c == cl {
			last := len(q.roomq) - 1
			copy(q.roomq[j:], q.roomq[j+1:])
			q.roomq[last] = nil
			q.roomq = q.roomq[:last]
			break
		}
	}
	cl.queued = false
	q.roomWaiters.Store(int32(len(q.roomq)))
}

// wakeRoom wakes the waiters at the head of the room queue whose room is
// there, in order, counting the room promised to those woken before them
// (now or earlier) that have not posted yet; the first that does not fit
// stops it (dl held). Each woken waiter is promised its room until it
// posts or gives up (dropPromise): a call that starts meanwhile queues
// behind it (postClaimed) rather than take the room, which would send the
// woken one back to the queue for another wake-up.
func (q *CQ) wakeRoom() {
	woken := 0
	for _, cl := range q.roomq {
		i, wq := promiseIndex(cl.recv), q.sq
		if cl.recv {
			wq = q.rq
		}
		if wq != nil && wq.room(q.promised[i]+cl.need) != nil {
			break
		}
		cl.queued = false
		cl.promised = cl.need
		q.promised[i] += cl.need
		q.promising.Add(1)
		cl.signal()
		woken++
	}
	if woken > 0 {
		n := copy(q.roomq, q.roomq[woken:])
		clear(q.roomq[n:])
		q.roomq = q.roomq[:n]
		q.roomWaiters.Store(int32(n))
	}
}

// dropPromise ends the room promised to cl, if any, and reports whether
// there was one (dl held).
func (q *CQ) dropPromise(cl *opClaim) bool {
	if cl.promised == 0 {
		return false
	}
	q.promised[promiseIndex(cl.recv)] -= cl.promised
	cl.promised = 0
	q.promising.Add(-1)
	return true
}

// promiseIndex is the index in CQ.promised of a queue's promises.
func promiseIndex(recv bool) int {
	if recv {
		return 1
	}
	return 0
}

// settle polls q (which delivers claimed completions and wakes room) and
// reports whether cl's wait is over: its completion came or, while it
// waits for room, it was woken for room.
func (cl *opClaim) settle() bool {
	q := cl.q
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	if q.dl.closed {
		return cl.done
	}
	if cl.need > 0 {
		if !cl.queued {
			return true
		}
		q.pollIntoStash("cq_wait")
		return !cl.queued
	}
	if !cl.done {
		q.pollIntoStash("cq_wait")
	}
	return cl.done
}

// ready reports whether cl's wait is over without polling.
func (cl *opClaim) ready() bool {
	q := cl.q
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	if cl.need > 0 {
		return !cl.queued
	}
	return cl.done
}

// try makes a claim the tryer of its parks while it holds the turn: the
// park is over when an event was read (the loop in awaitClaim then polls,
// delivering everyone's completions), when the claim is ready (another
// goroutine's poll delivered it), or when the connection has ended and
// nothing more will come (werr then says how).
func (cl *opClaim) try() bool {
	q := cl.q
	if got, err := q.readEvent(cl.op); got {
		cl.werr = err
		return true
	}
	if cl.ready() {
		cl.werr = nil
		return true
	}
	done, err := q.ev.ended(cl.settleFn, cl.flushFn)
	if done {
		cl.werr = err
	}
	return done
}

func (cl *opClaim) result() tryResult { return tryResult{q: cl.q, err: cl.werr} }

// tookEvent makes a claim an eventTaker: a WaitThread park read an event
// of the channel its CQ waits on, which ends the park as try does.
func (cl *opClaim) tookEvent(ref ibv.CQRef, err error) bool {
	q := cl.q
	if q.sc != nil {
		_, cl.werr = q.sc.event(cl.op, ref, err)
		return true
	}
	if cl.werr = q.ownEvent(cl.op, ref, err); cl.werr == nil {
		q.w.arrived(0)
	}
	return true
}

// readArgs makes a claim's park read events as its CQ says (spin.go); a
// shared channel's are always acknowledged and re-armed.
func (cl *opClaim) readArgs() (bool, int) {
	if cl.q.sc != nil {
		return true, 1
	}
	return cl.q.readArgs()
}

// prepark makes a claim an armer: before its park sleeps, a CQ left
// disarmed is armed and polled (spin.go), which may deliver the claim.
func (cl *opClaim) prepark() bool {
	q := cl.q
	if q.sc != nil {
		return false
	}
	if _, err := q.armForPark(); err != nil {
		cl.werr = err
		return true
	}
	if cl.ready() {
		cl.werr = nil
		return true
	}
	return false
}

// quiet makes a claim a quieter: besides an fd's readiness, only a
// delivery by another goroutine's poll ends its park.
func (cl *opClaim) quiet() bool { return !cl.ready() }

// claimWaiter returns the waiter q's waits park on: its own channel's, or
// the connection's shared one's.
func (q *CQ) claimWaiter() *waiter {
	if q.sc != nil {
		return q.sc.w
	}
	return q.w
}

// readEvent reads one pending event of the channel q waits on,
// acknowledged and re-armed, and records its arrival (for the mirror's
// waits); it reports false when none is pending. The caller holds the
// turn.
func (q *CQ) readEvent(op string) (bool, error) {
	if q.sc != nil {
		_, got, err := q.sc.readEvent(op)
		return got, err
	}
	got, err := q.readOwnEvent(op)
	if got && err == nil {
		q.w.arrived(0)
	}
	return got, err
}

// awaitClaim waits until cl's wait is over (see settle) and returns, for
// a completion, the claimed completion; the caller has entered q. On any
// error cl is closed (abandoned while its request is outstanding), and
// the caller must not use it again; after a completion cl is freed too,
// and after room it is left to the caller.
func (q *CQ) awaitClaim(ctx context.Context, cl *opClaim) (WC, error) {
	w := q.claimWaiter()
	for !cl.settle() {
		err := q.claimWait(ctx, w, cl)
		if err != nil && cl.settle() {
			break // the wait ended, but the completion (or room) had come
		}
		if err != nil {
			posted := cl.need == 0 && !cl.byCtx
			q.dl.mu.Lock()
			q.closeClaim(cl)
			q.dl.mu.Unlock()
			err = claimWaitError(err, posted)
			q.stats.waited(err)
			return WC{}, err
		}
	}
	q.stats.waited(nil)
	if cl.need > 0 {
		return WC{}, nil
	}
	q.dl.mu.Lock()
	wc := cl.wc
	q.closeClaim(cl)
	st := q.qpState()
	q.dl.mu.Unlock()
	if wc.Status != rpma.WCSuccess {
		return wc, failedOpError(&wc, st)
	}
	return wc, nil
}

// claimWait waits once for cl: until its owner is woken (a delivery,
// room), or, when it gets the turn, until its park ends (an event, cl
// ready, the connection's end: the error). It returns ctx.Err() when
// ctx ends and os.ErrClosed when the waiter is closed.
func (q *CQ) claimWait(ctx context.Context, w *waiter, cl *opClaim) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.closed.Load() {
		return errClosed(cl.op, "connection")
	}
	if !w.tryTurn() {
		select {
		case <-cl.wake:
			return nil
		case w.turn <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		case <-w.done:
			return errClosed(cl.op, "connection")
		}
	}
	defer w.release()
	// Completions may have come while nobody held the turn; then the
	// holder of the turn spins (spin.go; a shared channel's CQs have no
	// spin).
	if cl.settle() || q.spin.spin(cl.settleFn) {
		return nil
	}
	res, err := w.park(ctx, false, epoch{}, cl)
	if err != nil {
		return waitError(cl.op, "connection", "the completion", err)
	}
	q.dl.blocked()
	return res.err
}

// claimWaitError says of a wait for an operation's completion that ended
// by its context that the operation's outcome is unknown.
func claimWaitError(err error, posted bool) error {
	if posted && (err == context.Canceled || err == context.DeadlineExceeded) {
		return &unknownOutcomeError{err: err}
	}
	return err
}

// unknownOutcomeError ends a wait for a posted operation whose context
// ended first: the operation may still complete, or have completed.
type unknownOutcomeError struct{ err error }

func (e *unknownOutcomeError) Error() string {
	return "the operation was posted; its outcome is unknown (it may still complete): " + e.err.Error()
}

func (e *unknownOutcomeError) Unwrap() error { return e.err }

// Is matches rpma.ErrOutcomeUnknown.
func (e *unknownOutcomeError) Is(target error) bool { return target == rpma.ErrOutcomeUnknown }

// qpState returns the state of the QP whose requests complete on q, nil
// for an SRQ's receive CQ (dl held).
func (q *CQ) qpState() *qpState {
	switch {
	case q.sq != nil:
		return q.sq.qp
	case q.rq != nil:
		return q.rq.qp
	}
	return nil
}

// failedOpError is the error of an operation whose completion failed:
// the connection is broken then (it matches rpma.ErrConnBroken, with the
// first failure as its cause) and the operation's own failure (a
// *rpma.WCError matching rpma.ErrCompletion) is kept when it is not that
// first failure (a flushed request after another one failed).
func failedOpError(wc *WC, st *qpState) error {
	own := wc.Err()
	if st == nil {
		return own
	}
	broken := st.broken.Load()
	if broken == nil {
		return own
	}
	if first, ok := broken.cause.(*rpma.WCError); ok && first.WRID == wc.OpContext && first.Status == wc.Status {
		return broken
	}
	return fmt.Errorf("%w (this operation: %w)", broken, own)
}

// WaitFor is cq.CQ.WaitFor's core (see there): it takes only its own completion (claim.go).
func (q *CQ) WaitFor(ctx context.Context, opContext uint64) (WC, error) {
	const op = "cq_wait_for"
	switch {
	case q == nil:
		return WC{}, errNil(op, "CQ")
	case ctx == nil:
		return WC{}, errNil(op, "context")
	}
	if !q.enter() {
		return WC{}, errClosed(op, "CQ")
	}
	defer q.exit()
	q.dl.mu.Lock()
	if q.dl.closed {
		q.dl.mu.Unlock()
		return WC{}, errClosed(op, "CQ")
	}
	cl := q.openCtxClaim(op, opContext)
	q.dl.mu.Unlock()
	return q.awaitClaim(ctx, cl)
}
