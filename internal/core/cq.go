package core

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// WC is a work completion as the module reports it: rpma.WC, whose layout
// is the one ibv.WC polls into (checked below), so that package cq's
// GetWC hands a caller's slice down as it is.
type WC = rpma.WC

// Compile-time checks that WC and ibv.WC have one layout.
var (
	_ [0]struct{} = [unsafe.Sizeof(WC{}) - unsafe.Sizeof(ibv.WC{})]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.OpContext) - unsafe.Offsetof(ibv.WC{}.WRID)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.Status) - unsafe.Offsetof(ibv.WC{}.Status)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.Opcode) - unsafe.Offsetof(ibv.WC{}.Opcode)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.VendorErr) - unsafe.Offsetof(ibv.WC{}.VendorErr)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.ByteLen) - unsafe.Offsetof(ibv.WC{}.ByteLen)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.Imm) - unsafe.Offsetof(ibv.WC{}.ImmData)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.QPNum) - unsafe.Offsetof(ibv.WC{}.QPNum)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.SrcQP) - unsafe.Offsetof(ibv.WC{}.SrcQP)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.Flags) - unsafe.Offsetof(ibv.WC{}.WCFlags)]struct{}{}
)

// CQ mirrors struct rpma_cq: a completion queue and its completion channel
// (its own, or the connection's shared one). CQs are created armed
// (ibv_req_notify_cq) with their connection (or SRQ) and destroyed by it.
//
// Polls, the stash and the accounting of the queues that complete here
// are under dl, the data lock of the CQ's owner (the connection, which
// its posts take too, or the SRQ); the CQ's life guards its waits.
type CQ struct {
	life
	dl     *dataLock
	cq     *ibv.CQ
	ch     *ibv.CompChannel
	ownCh  bool    // ch is the CQ's own (else the shared one)
	w      *waiter // nil when the channel is shared (the connection waits)
	shared bool
	noReap bool // Tuning.NoReap: posts do not reap
	fd     int
	size   int
	maxCQE int // the device's limit, for Resize
	budget cqBudget
	ev     *connEvents // the connection's events, watched by Wait; nil for an SRQ's RCQ
	ends   *endFlush   // the connection's end, shared with its other CQ; nil for an SRQ's RCQ

	// Where its completions come from, by kind of work request id.
	sq        *workQueue
	rq        *workQueue
	srq       *srqTable
	srqLocked bool // srq's lock is dl (the SRQ's own RCQ)

	// The stash: the caller's completions polled (by posts that reap, by
	// a full post, by a wait) but not returned yet, which GetWC returns
	// first: stash[:n], in C memory (buf) so that C polls into it
	// directly.
	buf   *ibv.WCBuf
	stash []WC
	n     int
	// drained (dl held): the last poll emptied the CQ, and no event was
	// read since, so every completion the CQ holds came after that poll
	// with the CQ armed: each has its event pending on the channel, and a
	// wait can park at once instead of polling first (fillIfUnannounced).
	// Reading an event clears it: that event's completions, and any that
	// came while the CQ was disarmed, may be in the CQ unannounced.
	drained bool

	wres error // the outcome of the parked wait's attempt (try)

	// The spin and lazy arming (spin.go). armed (dl held): a request for
	// notification is in force, made since the last event read; eager:
	// armed for good (an event loop asked). The others are the holder of
	// the turn's: unacked counts the events read and not acknowledged,
	// evRearm and evAck say how the event read in progress re-arms and
	// acknowledges (readArgs).
	armed bool
	eager atomic.Bool
	// absorbed (dl held): completions the caller never sees were polled
	// while the CQ was disarmed (overLocked). absorbedAny (dl held): such
	// completions were polled since the last event read, armed or not;
	// eventAbsorbed, the holder of the turn's, is its value when the last
	// event was read: that event announced them (afterLazyEvent).
	absorbed      bool
	absorbedAny   bool
	eventAbsorbed bool
	spin          spinner
	unacked       int
	evRearm       bool
	evAck         int
	fillFn        func() bool // fill, made once

	// Claims (claim.go): the open op-context claims, oldest first; sc is
	// the connection's shared channel, nil when the CQ has its own.
	claims []*opClaim
	sc     *sharedChannel
	// The room queue (claim.go): per-operation calls waiting for room in
	// a queue whose completions come here, oldest first; roomWaiters is
	// its length, read without the lock by calls about to post.
	roomq       []*opClaim
	roomWaiters atomic.Int32
	// The room promised to calls woken for room that have not posted yet
	// (claim.go, wakeRoom): slots of the send queue and of the receive
	// queue; promising counts those calls, read without the lock like
	// roomWaiters.
	promised  [2]uint64
	promising atomic.Int32
	// callers counts the per-operation calls in progress on the CQ
	// (runWait), for their turn-taking (tuning.go).
	callers atomic.Int32

	// Reaping (see reapRoom): consecutive posts whose reap found nothing
	// or that did not reap.
	reapIdle uint64
	// Counted for benchmarks (ReapStats): posts, those that reaped, and
	// those whose reap found a completion.
	reapPosts, reapReaps, reapHits uint64

	stats cqCounters // rpma.CQStats (stats.go)

	leak *leak.Handle
}

// newCQ creates a CQ of at least cqe entries with its own completion
// channel, or on shared when it is not nil, under the data lock dl. Its
// waits also watch the fds in watch (the connection's event channel and
// its eventfd). With thread, its waits park in WaitThread mode. Its waits
// spin for at most spin before they park (spin.go; 0: never), unless the
// channel is shared.
func newCQ(op string, ctx *ibv.Context, dl *dataLock, cqe int, shared *ibv.CompChannel, thread bool, spin time.Duration, watch ...int) (*CQ, error) {
	q := &CQ{dl: dl, ch: shared, shared: shared != nil, noReap: dl.tune.NoReap}
	if shared == nil && !dl.tune.NoSpin {
		q.spin = newSpinner(spin)
	}
	q.fillFn = q.fill
	if shared == nil {
		ch, err := ctx.CreateCompChannel()
		if err != nil {
			return nil, provider(op, err)
		}
		w, err := newChannelWaiter(ch, dl.tune, thread, watch...)
		if err != nil {
			ch.Destroy()
			return nil, provider(op, err)
		}
		q.ch, q.w, q.ownCh = ch, w, true
	}
	cq, err := ctx.CreateCQ(cqe, q.ch, 0)
	if err != nil {
		q.destroyChannel()
		return nil, provider(op, err)
	}
	if err := cq.ReqNotify(false); err != nil {
		cq.Destroy()
		q.destroyChannel()
		return nil, provider(op, err)
	}
	q.cq = cq
	q.armed = true
	q.fd = q.ch.FD()
	q.size = cq.CQE()
	q.budget.capacity = int64(q.size)
	q.budget.setLimits()
	if err := q.setStash(q.size); err != nil {
		cq.Destroy()
		q.destroyChannel()
		return nil, provider(op, err)
	}
	q.leak = leak.Track("cq.CQ")
	q.open()
	return q, nil
}

// newChannelWaiter returns the waiter of a completion channel's waits,
// which also watch fds (the connection's event channel and its eventfd),
// gated unless tune says otherwise (gate.go), parking in WaitThread mode
// when thread is set.
func newChannelWaiter(ch *ibv.CompChannel, tune Tuning, thread bool, fds ...int) (*waiter, error) {
	w, err := newEpollWaiter("ibv_comp_channel", !tune.NoGate, ch.FD(), fds...)
	if err != nil || !thread {
		return w, err
	}
	if err := w.startThreadWaits(ch, fds...); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// setStash gives the stash room for n completions, keeping what it holds.
func (q *CQ) setStash(n int) error {
	buf, err := ibv.NewWCBuf(n)
	if err != nil {
		return err
	}
	raw := buf.Slice()
	stash := unsafe.Slice((*WC)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw))
	copy(stash, q.stash[:q.n])
	q.buf.Free()
	q.buf, q.stash = buf, stash
	return nil
}

func (q *CQ) destroyChannel() error {
	if !q.ownCh {
		return nil
	}
	q.w.close()
	return q.ch.Destroy()
}

// FD is cq.CQ.FD's core; see there.
func (q *CQ) FD() int {
	if q == nil || q.closed() {
		return -1
	}
	q.armEager()
	return q.fd
}

// Size is cq.CQ.Size's core; see there.
func (q *CQ) Size() int {
	if q == nil || q.dl == nil {
		return 0
	}
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	return q.size
}

// IsShared reports whether q's completion channel is shared with the other
// CQ of its connection.
func (q *CQ) IsShared() bool { return q != nil && q.shared }

// ibvCQ returns the verbs CQ, nil for a nil q.
func (q *CQ) ibvCQ() *ibv.CQ {
	if q == nil {
		return nil
	}
	return q.cq
}

// Wait is cq.CQ.Wait's core (see there): a broadcast wait that also watches the connection.
func (q *CQ) Wait(ctx context.Context) error {
	const op = "cq_wait"
	if err := q.checkWait(op, ctx); err != nil {
		return err
	}
	if !q.enter() {
		return errClosed(op, "CQ")
	}
	defer q.exit()
	err := q.wait(ctx, op)
	q.stats.waited(err)
	return err
}

// TryWait is cq.CQ.TryWait's core; see there.
func (q *CQ) TryWait() error {
	const op = "cq_wait"
	if err := q.checkWait(op, context.Background()); err != nil {
		return err
	}
	if !q.enter() {
		return errClosed(op, "CQ")
	}
	defer q.exit()
	q.armEager()
	if !q.w.tryTurn() {
		// Another goroutine is parked on the channel: whatever is
		// pending is its to read.
		if q.pending() {
			return nil
		}
		return errNoCompletionYet
	}
	done, err := q.tryOnce(op)
	if done && err == nil {
		q.w.arrived(0)
	}
	q.w.release()
	if !done {
		return errNoCompletionYet
	}
	return err
}

var errNoCompletionYet = rpmaerr.New("cq_wait", rpma.CodeNoCompletion, 0, "no completion event pending")

func (q *CQ) checkWait(op string, ctx context.Context) error {
	switch {
	case q == nil:
		return errNil(op, "CQ")
	case ctx == nil:
		return errNil(op, "context")
	case q.shared:
		return rpmaerr.New(op, rpma.CodeSharedChannel, 0, "use conn.Conn.Wait")
	}
	return nil
}

// wait is Wait for a caller that has entered q.
func (q *CQ) wait(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w := q.w
	e := w.epochNow()
	// The fast path: an event already pending, read in one crossing with
	// nothing allocated; skipped while waits keep sleeping (fastDue) and
	// while the spin is on and the CQ is not armed (no event can be
	// pending then, but one left from before, which a park reads). Only
	// the holder of the turn reads events, so a goroutine parked on the
	// channel never sleeps through one. Then completions may wait in the
	// CQ with their event already read (by a wait that returned before
	// they were polled) or, disarmed, with none; and then the holder of
	// the turn spins (spin.go).
	if w.tryTurn() {
		if w.fastDue() && (!q.spin.on() || q.isArmed()) {
			done, err := q.tryEvent(op, false)
			if done && err == nil {
				w.arrived(0)
			}
			if done {
				w.release()
				return err
			}
		}
		over := q.fillIfUnannounced() || q.spin.spin(q.fillFn)
		w.release()
		if over {
			return nil
		}
	} else if q.fillIfUnannounced() {
		return nil
	}
	res, err := w.wait(ctx, true, e, q)
	if err != nil {
		return waitError(op, "CQ", "a completion event", err)
	}
	if q.dl != nil {
		q.dl.blocked()
	}
	return res.err
}

// try and result make q the tryer of its own channel's waits: the state
// of the attempt is q's, written by the holder of the turn only.
func (q *CQ) try() bool {
	done, err := q.tryOnce("cq_wait")
	if done {
		q.wres = err
		if err == nil {
			q.w.arrived(0)
		}
	}
	return done
}

func (q *CQ) result() tryResult { return tryResult{q: q, err: q.wres} }

// quiet makes q a quieter: the stash is the one thing that ends its waits
// without an fd's readiness (the connection's end makes termFD readable).
func (q *CQ) quiet() bool { return !q.pending() }

// tryOnce reads a pending completion event of the CQ's own channel
// (first, so that an event loop's fd stops being readable even when a
// post reaped the completions it announces); with none, the wait is over
// if reaped completions wait in the stash, else if the connection has
// ended. It reports whether the wait is over, and with what error. The
// caller holds the turn.
func (q *CQ) tryOnce(op string) (bool, error) {
	if done, err := q.tryEvent(op, true); done {
		return true, err
	}
	return q.ev.ended(q.fill, q.flushDue)
}

// tryEvent is tryOnce without the check of the connection's end, which
// costs a system call (a read of the connection's CM events): the fast
// path of a wait, which, when it finds nothing, parks. The park looks at
// every fd that could end the wait, the connection's included, before it
// sleeps, and runs tryOnce only when one is ready (quieter). The caller
// holds the turn.
func (q *CQ) tryEvent(op string, parking bool) (bool, error) {
	if got, err := q.readOwnEvent(op); got {
		if err != nil || !q.mayBeLazy() {
			return true, err
		}
		return q.afterLazyEvent(parking)
	}
	return q.overNow(), nil
}

// mayBeLazy reports whether the CQ's events may be stale: it has a spin
// (spin.go), so it may have been left disarmed and re-armed by a park
// whose arming's poll found its completion, which then raised an event
// nobody needs; not for an event loop's CQ (eager). Only the holder of
// the turn calls it.
func (q *CQ) mayBeLazy() bool { return q.spin.limit > 0 && !q.eager.Load() }

// afterLazyEvent decides a wait after an event read on a CQ that may be
// lazy (mayBeLazy): the event may be stale (its completion caught by a
// spin or a poll while the CQ was armed, and returned to the caller), so
// the wait ends only on what the stash holds or a poll finds, or when
// completions the caller never sees were polled before the event was
// read or by that poll (it announced them, as an armed CQ's event always
// ended a wait: a loop that waits after a full queue and an empty GetWC
// goes on). With
// nothing, a park that goes on sleeping arms the CQ first if the read
// left it disarmed (and polls again, in one crossing); the fast path
// leaves it as it is, for the spin. The caller holds the turn.
func (q *CQ) afterLazyEvent(parking bool) (bool, error) {
	if q.eventAbsorbed || q.fillIfUnannounced() || q.takeAbsorbedAny() {
		return true, nil
	}
	if !parking || q.evRearm {
		return false, nil
	}
	over, err := q.armForPark()
	return over || err != nil, err
}

// readOwnEvent reads a pending event of the CQ's own channel,
// acknowledged and re-armed as readArgs says, and reports whether there
// was one (or a failure to read it). The caller holds the turn and records the
// arrival.
func (q *CQ) readOwnEvent(op string) (bool, error) {
	ref, err := q.ch.GetCQEvent(q.readArgs())
	if isAgain(err) {
		return false, nil
	}
	return true, q.ownEvent(op, ref, err)
}

// ownEvent handles an event read from the CQ's own channel (ref, or the
// failure to read or re-arm, err): the CQ may now hold unannounced
// completions, and an event of another CQ is an error. The caller holds
// the turn and records the arrival.
func (q *CQ) ownEvent(op string, ref ibv.CQRef, err error) error {
	q.ownEventRead(err)
	switch {
	case err != nil:
		return cqEventError(op, err)
	case !q.cq.Is(ref):
		return rpmaerr.New(op, rpma.CodeUnknown, 0, "event of an unknown CQ")
	}
	return nil
}

// tookEvent makes q an eventTaker: a WaitThread park read an event of
// its channel (waiter.parkThread), which ends the wait as try does (or
// not, a stale event read lazily: afterLazyEvent).
func (q *CQ) tookEvent(ref ibv.CQRef, err error) bool {
	q.wres = q.ownEvent("cq_wait", ref, err)
	if q.wres == nil && q.mayBeLazy() {
		var over bool
		if over, q.wres = q.afterLazyEvent(true); !over {
			return false
		}
	}
	if q.wres == nil {
		q.w.arrived(0)
	}
	return true
}

// cqEventError maps a failure of GetCQEventRearm: reading the event
// matches rpma.ErrNoCompletion (librpma's rpma_cq_wait), re-arming
// rpma.ErrProvider.
func cqEventError(op string, err error) error {
	if isArmFailure(err) {
		return provider(op, err)
	}
	return rpmaerr.New(op, rpma.CodeNoCompletion, errnoOf(err), "ibv_get_cq_event failed")
}

// GetWC is cq.CQ.GetWC's core (see there): the stash first, else one poll.
func (q *CQ) GetWC(wc []WC) (int, error) {
	const op = "cq_get_wc"
	if q == nil {
		return 0, errNil(op, "CQ")
	}
	if len(wc) == 0 {
		return 0, errNoWCSlots
	}
	d := q.dl
	if d == nil {
		return 0, errClosed(op, "CQ")
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return 0, errClosed(op, "CQ")
	}
	if q.n == 0 {
		if err := q.poll(op); err != nil {
			d.mu.Unlock()
			return 0, err
		}
		if q.n == 0 {
			d.unlockAfterCrossing()
			return 0, rpma.ErrNoCompletion
		}
	}
	n := q.take(wc)
	d.mu.Unlock()
	return n, nil
}

// take moves the first completions of the stash into wc and returns how
// many (dl held). One completion, the busy poller's usual case, is copied
// as a struct, and an emptied stash is not shifted: no call of memmove.
func (q *CQ) take(wc []WC) int {
	n := min(len(wc), q.n)
	if n == 1 {
		wc[0] = q.stash[0]
	} else {
		copy(wc, q.stash[:n])
	}
	if n == q.n {
		q.n = 0
	} else {
		q.n = copy(q.stash, q.stash[n:q.n])
	}
	return n
}

// isArmFailure reports whether err is a failure of ibv_req_notify_cq.
func isArmFailure(err error) bool {
	var se *os.SyscallError
	return errors.As(err, &se) && se.Syscall == "ibv_req_notify_cq"
}

var errNoWCSlots = rpmaerr.Inval("cq_get_wc", "no room for completions (empty slice)")

// poll polls what the CQ holds into the stash's free room, translating
// (dl held); with only absorbed completions in a full batch it polls
// again.
func (q *CQ) poll(op string) error {
	for {
		room := len(q.stash) - q.n
		if room == 0 {
			return nil
		}
		got, err := q.cq.Poll(q.buf, q.n, room)
		if err != nil {
			return provider(op, err)
		}
		kept := q.accept(got)
		if got < room {
			q.drained = true
			return nil
		}
		if kept > 0 {
			return nil
		}
	}
}

// accept translates the got completions just polled into the stash after
// its n, keeping the caller's (dl held), and returns how many it kept.
func (q *CQ) accept(got int) int {
	from := q.n
	if got == 1 { // a busy poller's usual case: no loop
		if q.translate(&q.stash[q.n]) {
			q.n++
		} else {
			q.absorbed = q.absorbed || !q.armed
			q.absorbedAny = true
		}
	} else {
		k := q.n
		for i := q.n; i < q.n+got; i++ {
			if q.translate(&q.stash[i]) {
				if k != i {
					q.stash[k] = q.stash[i]
				}
				k++
			}
		}
		if k-q.n < got {
			q.absorbed = q.absorbed || !q.armed
			q.absorbedAny = true
		}
		q.n = k
	}
	if len(q.claims) != 0 {
		q.deliverCtx(from)
	}
	if len(q.roomq) != 0 {
		q.wakeRoom()
	}
	return q.n - from
}

// Reaping: a post polls its CQ in the same crossing (ibv.Reap). Where
// completions come quickly (rxe's loopback on 6.1 completes before the
// post returns) the one just posted is there, and GetWC then returns it
// without a crossing; where they come later (a wire, hardware) the reap
// finds nothing, so after reapIdleMax empty reaps in a row only every
// reapEvery-th post reaps, until a reap finds something again (the
// thresholds: tuning.go).

// reapRoom returns how many completions a post should reap (dl held).
func (q *CQ) reapRoom() int {
	q.reapPosts++
	room := len(q.stash) - q.n
	if room == 0 || q.noReap {
		return 0
	}
	if idle := q.reapIdle; idle >= reapIdleMax && (idle-reapIdleMax)%reapEvery != reapEvery-1 {
		return 0
	}
	q.reapReaps++
	return min(room, reapMax)
}

// reap returns where a post reaps into (dl held).
func (q *CQ) reap() ibv.Reap {
	return q.cq.ReapInto(q.buf, q.n, q.reapRoom())
}

// reaped accepts the got completions a post reaped (dl held). It is
// small enough to inline into the post.
func (q *CQ) reaped(got int) {
	if got == 0 {
		q.reapIdle++
		return
	}
	q.reapHits++
	q.reapIdle = 0
	q.accept(got)
}

// pollIntoStash polls into the stash's free room (dl held) and reports
// whether there was any room. A poll error is left for GetWC to report.
func (q *CQ) pollIntoStash(op string) bool {
	if len(q.stash) == q.n {
		return false
	}
	q.poll(op)
	return true
}

// fill polls what the CQ holds into the stash and reports whether the
// stash holds any of the caller's completions.
func (q *CQ) fill() bool {
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	if q.dl.closed {
		return false
	}
	q.pollIntoStash("cq_wait")
	return q.overLocked()
}

// overLocked reports whether a completion wait is over (dl held): the
// stash holds the caller's completions, or completions the caller never
// sees (absorbed, claimed) came while the CQ was disarmed, which an armed
// CQ would have announced with an event that ends a wait (spin.go);
// reporting those clears them.
func (q *CQ) overLocked() bool {
	if q.absorbed {
		q.absorbed = false
		return true
	}
	return q.n > 0
}

// overNow is overLocked for a caller without the lock.
func (q *CQ) overNow() bool {
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	return q.overLocked()
}

// fillIfUnannounced is fill for a wait about to park: it polls only when
// the CQ may hold completions whose event was read already (or never
// raised); when it was drained since the last event read, the park will
// see the event of anything that came since, and the poll, a crossing,
// would find nothing a park does not (a loop that polls until the CQ is
// empty and then waits).
func (q *CQ) fillIfUnannounced() bool {
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	switch {
	case q.dl.closed:
		return false
	case q.overLocked():
		return true
	case q.drained && q.armed:
		return false
	}
	q.pollIntoStash("cq_wait")
	return q.overLocked()
}

// takeAbsorbedAny reports, and clears, whether completions the caller
// never sees were polled since the last event read (absorbedAny): after
// a poll that followed an event's read, they are the event's.
func (q *CQ) takeAbsorbedAny() bool {
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	had := q.absorbedAny
	q.absorbedAny = false
	return had
}

// isArmed reports whether a request for notification is in force.
func (q *CQ) isArmed() bool {
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	return q.armed
}

// eventRead records that an event of a shared channel's CQ was read: it
// may hold completions no pending event announces (drained). Its read
// re-armed it and acknowledged the event.
func (q *CQ) eventRead() {
	q.dl.mu.Lock()
	q.drained = false
	q.dl.mu.Unlock()
}

// ownEventRead records the outcome err of an event of the CQ's own
// channel read by the holder of the turn as readArgs said: the CQ may hold completions no pending
// event announces (drained), it is armed only if the read re-armed it
// (an eager CQ is re-armed at once, should an event loop have asked
// after the read's arguments were chosen), and the events it did not
// acknowledge are counted. A read that failed (ibv_get_cq_event) read
// nothing.
func (q *CQ) ownEventRead(err error) {
	read := err == nil || isArmFailure(err)
	if read {
		q.unacked += 1 - q.evAck
	}
	q.dl.mu.Lock()
	q.drained = false
	q.eventAbsorbed, q.absorbedAny = q.absorbedAny, false
	if read {
		q.armed = q.evRearm && err == nil
		if !q.armed && q.eager.Load() && !q.dl.closed && q.cq.ReqNotify(false) == nil {
			q.armed = true
		}
	}
	q.dl.mu.Unlock()
}

// drain polls and retires whatever the CQ still holds, dropping the
// caller's completions: its connection is being closed (its QP is gone),
// and slots of an SRQ that completed here must go back to the SRQ.
func (q *CQ) drain() {
	if q == nil || q.cq == nil || q.closed() {
		return
	}
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	q.n = 0
	for q.pollIntoStash("cq_drain") && q.n > 0 {
		q.n = 0
	}
}

// pending reports whether reaped completions wait in the stash, or
// unannounced ones were absorbed (overLocked), without clearing those.
func (q *CQ) pending() bool {
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	return q.n > 0 || q.absorbed
}

// translate turns a polled completion into the caller's (dl held): it
// retires the queue slots, restores the op context, converts the
// immediate data to host order and marks the QP broken on failure. It
// reports whether the completion is the caller's (false: absorbed).
func (q *CQ) translate(w *WC) bool {
	id := w.OpContext
	ok := w.Status == rpma.WCSuccess
	q.stats.completions++
	if !ok {
		q.stats.failedWith(w.Status)
	}
	user := true
	switch id & wrKindMask {
	case wrKindSQ:
		if q.sq == nil {
			break
		}
		sl := q.sq.complete(id & wrSeqMask)
		w.OpContext, user = sl.ctx, sl.user
		if !ok {
			q.sq.qp.breakWith(w.Err())
		}
		if sl.claimed {
			if sl.claim != nil {
				q.sq.ring[id&q.sq.mask].claim = nil
				q.deliverSlot(sl.claim, w)
			}
			return false
		}
		if sl.own {
			seq := id & wrSeqMask
			q.sq.ownDone = seq + 1
			q.sq.ownErr = nil
			if !ok {
				q.sq.ownErr = w.Err()
			}
			if f, ok := q.sq.abandoned[seq]; ok {
				delete(q.sq.abandoned, seq)
				go f() // it takes locks this poll's caller may hold
			}
			return false
		}
		if sl.probe {
			if !ok && q.sq.probeErr == nil {
				q.sq.probeErr = &probeError{err: w.Err()}
			}
			return false
		}
	case wrKindRQ:
		if q.rq == nil {
			break
		}
		sl := q.rq.complete(id & wrSeqMask)
		w.OpContext = sl.ctx
		if ok {
			q.stats.bytesReceived += uint64(w.ByteLen)
		}
		if !ok {
			q.rq.qp.breakWith(w.Err())
		}
		if sl.claim != nil {
			q.rq.ring[id&q.rq.mask].claim = nil
			q.fixImm(w)
			q.deliverSlot(sl.claim, w)
			return false
		}
	case wrKindSRQ:
		if q.srq == nil {
			break
		}
		w.OpContext = q.srq.complete(uint32(id&wrSeqMask), q.srqLocked)
		if ok {
			q.stats.bytesReceived += uint64(w.ByteLen)
		}
		if !ok {
			q.srq.breakQP(w.QPNum, w.Err())
		}
	}
	q.fixImm(w)
	return user || !ok
}

// fixImm converts a completion's immediate data to host order.
func (q *CQ) fixImm(w *WC) {
	if w.Flags&ibv.WCWithImm != 0 {
		var b [4]byte
		binary.NativeEndian.PutUint32(b[:], w.Imm)
		w.Imm = binary.BigEndian.Uint32(b[:])
	}
}

// Resize resizes the CQ (ibv_resize_cq) to at least n entries.
func (q *CQ) Resize(n int) error {
	const op = "cq_resize"
	if q == nil {
		return errNil(op, "CQ")
	}
	maxCQE := q.maxCQE
	if n < 1 || (maxCQE > 0 && n > maxCQE) {
		return rpmaerr.Inval(op, "size %d out of range [1, %d]", n, maxCQE)
	}
	if !q.enter() {
		return errClosed(op, "CQ")
	}
	defer q.exit()
	// Posts reserve under the data lock: holding it across the check and
	// the resize makes them atomic with respect to posts.
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	b := &q.budget
	// Every outstanding work request can still put a completion on the
	// CQ (at least on error), and the unpolled ones are there already: a
	// smaller CQ would overrun, which the provider notices only for the
	// unpolled (rxe: EINVAL). Entries reserved for an SRQ's receives
	// count too.
	if used := b.used + b.reserved + int64(q.n); int64(n) < used {
		return rpmaerr.New(op, rpma.CodeInval, syscall.EINVAL,
			"size %d is below the %d completions outstanding, reserved for an SRQ's receives or not yet polled", n, used)
	}
	if err := q.cq.Resize(n); err != nil {
		return providerMsg(op, err, "resize to %d entries (with %d entries possibly unpolled; the provider refuses a size below them)",
			n, b.used)
	}
	q.size = q.cq.CQE()
	b.capacity = int64(q.size)
	b.setLimits()
	if len(q.stash) < q.size {
		if err := q.setStash(q.size); err != nil {
			return provider(op, err)
		}
	}
	return nil
}

// wake wakes the CQ's waits, which return an error matching
// os.ErrClosed; the CQ is being closed.
func (q *CQ) wake() {
	if q != nil && q.w != nil {
		q.w.close()
	}
}

// close destroys the CQ and, if it owns it, its channel (rpma_cq_delete).
// It is idempotent and nil-safe. The QP using the CQ must be gone.
func (q *CQ) close() error {
	if q == nil || !q.beginClose() {
		return nil
	}
	if q.w != nil {
		q.w.close()
	}
	q.lock()
	defer q.unlock()
	// Every event read must be acknowledged first (spin.go). The channel
	// only once its CQ is gone; a failed step leaves the rest to a
	// retried close.
	q.ackAll()
	if err := q.cq.Destroy(); err != nil {
		q.closeFailed()
		return provider("cq_delete", err)
	}
	if err := q.destroyChannel(); err != nil {
		q.closeFailed()
		return provider("cq_delete", err)
	}
	q.dl.mu.Lock()
	q.buf.Free()
	q.buf, q.stash, q.n = nil, nil, 0
	q.dl.mu.Unlock()
	q.leak.Release()
	return nil
}
