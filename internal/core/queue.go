package core

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/gorpma/rpma/rpma"
)

// Work request ids. The id a work request carries is not the caller's
// op context but an internal one: its queue in the top two bits and its
// sequence number (send and receive queues) or slot (SRQ) below. The
// completion then says, whatever its status and opcode, which queue and
// which request it belongs to, so that queue slots are accounted exactly,
// the caller's context is restored from a table, and completions the
// library requested for itself are absorbed.
const (
	wrKindShift = 62
	wrKindMask  = uint64(3) << wrKindShift
	wrSeqMask   = uint64(1)<<wrKindShift - 1
	wrKindSQ    = uint64(1) << wrKindShift
	wrKindRQ    = uint64(2) << wrKindShift
	wrKindSRQ   = uint64(3) << wrKindShift
)

// Errors of a full queue; prebuilt, so returning them does not allocate.
// They match rpma.ErrQueueFull (and so rpma.ErrProvider, which librpma
// returns when ibv_post_send fails on a full queue).
var (
	errSQFull  = fmt.Errorf("send queue full: poll the completion queue to retire work requests: %w", rpma.ErrQueueFull)
	errRQFull  = fmt.Errorf("receive queue full: %w", rpma.ErrQueueFull)
	errSRQFull = fmt.Errorf("shared receive queue full: %w", rpma.ErrQueueFull)
	errCQFull  = fmt.Errorf("completion queue would overrun: poll it before posting more: %w", rpma.ErrQueueFull)
)

// dataLock is the data-path lock of a connection (and its request) or of
// an SRQ: posts, polls, the stash and every counter of the accounting
// below (the queues, the CQ budgets) are under it, as plain fields. It is
// the only lock a post or a poll takes.
type dataLock struct {
	mu        sync.Mutex
	closed    bool   // set by Close, under mu: posts and polls refuse from then on
	lastYield uint64 // tsc.Read at the connection's last yield (yield.go)
	period    uint64 // yieldCounts when it was made, last yielded or blocked
	tune      Tuning // its peer's, when it was created (tuning.go)
	stats     dataCounters
	// comb is the combining list (combine.go): the waiting calls'
	// requests that wait to be posted, the newest first, linked through
	// opClaim.next. Pushed without mu; taken (swapped out) under mu only.
	comb atomic.Pointer[opClaim]
}

// cqBudget guards a CQ against overrun: every work request that can put
// a completion on the CQ (all of them can, on error) holds one entry from
// its post until the completion that retires it is polled. It is under
// the CQ's data lock; CQ.Resize holds that lock across its check and the
// resize, atomically with respect to posts.
type cqBudget struct {
	capacity int64
	used     int64
	reserved int64 // entries kept for receives no post can account for (an SRQ's)
	high     int64 // the most used ever (rpma.CQStats.HighWater)
	// fast is min(high, capacity-reserved): up to it a reservation fits
	// and moves no high-water mark, so workQueue.tryReserve needs one
	// comparison for both (setLimits keeps it).
	fast int64
}

// fits reports whether n more entries fit (b may be nil: no CQ to guard).
func (b *cqBudget) fits(n int64) bool {
	return b == nil || b.used+n <= b.capacity-b.reserved
}

func (b *cqBudget) take(n int64) {
	if b != nil {
		b.used += n
		if b.used > b.high {
			b.high = b.used
			b.setLimits()
		}
	}
}

// setLimits recomputes fast after high, capacity or reserved changed.
func (b *cqBudget) setLimits() {
	b.fast = min(b.high, b.capacity-b.reserved)
}

func (b *cqBudget) release(n int64) {
	if b != nil {
		b.used -= n
	}
}

// qpState is what the send and receive queues of one QP share: whether
// the QP is broken, and why.
type qpState struct {
	broken atomic.Pointer[brokenError]
}

// brokenError is returned by posts on a broken connection. It matches
// rpma.ErrConnBroken and tells the cause.
type brokenError struct{ cause error }

func (e *brokenError) Error() string {
	return rpma.ErrConnBroken.Error() + ": " + e.cause.Error()
}

func (e *brokenError) Unwrap() []error { return []error{rpma.ErrConnBroken, e.cause} }

// breakWith marks the QP broken; the first cause sticks.
func (s *qpState) breakWith(cause error) {
	s.broken.CompareAndSwap(nil, &brokenError{cause: cause})
}

// err returns the error posts get, nil while the QP works.
func (s *qpState) err() error {
	if e := s.broken.Load(); e != nil {
		return e
	}
	return nil
}

// wrSlot is what a queue remembers of a posted work request.
type wrSlot struct {
	ctx   uint64 // the caller's op context
	user  bool   // the caller asked for a completion on success
	probe bool   // the liveness probe's (never the caller's, even failed)
	own   bool   // the library's own request, e.g. a grant's bind (never the caller's)
	// A request posted for a caller that waits for it (claim.go): its
	// completion goes to claim, never to the stash; a claimed slot
	// without a claim (the write before a claimed flush) is absorbed.
	claimed bool
	claim   *opClaim
}

// workQueue accounts for the send or the receive queue of one QP, under
// its connection's data lock. Work requests complete in order on an RC
// QP, so a completion for sequence number s retires every request up to
// s, signaled or not.
type workQueue struct {
	depth   uint64
	mask    uint64 // len(ring)-1: the ring is the depth rounded up to a power of two
	ring    []wrSlot
	posted  uint64
	retired uint64
	high    uint64 // the most requests reserved at once (rpma.ConnStats.SendQueueHighWater)
	cq      *CQ    // its completions go to
	budget  *cqBudget
	full    error
	qp      *qpState

	// Send queues only: the run of unsignaled requests since the last
	// signaled one, and the run length that gets a request signaled.
	unsignaled int
	autoEvery  int

	// The liveness probe (liveness.go), outstanding from its post until
	// a completion retires its sequence number; it has a slot of its own
	// beyond depth.
	probing  bool
	probeSeq uint64
	probeErr error // the first failed probe's completion error (liveness.go reports it)

	// The last of the library's own requests (wrSlot.own) that completed:
	// its sequence number + 1, and its error (nil on success). One is
	// outstanding at a time (grants.go serializes them).
	ownDone uint64
	ownErr  error
	// abandoned holds the library's own requests that nobody waits for
	// any more (a grant's bind whose ctx ended), by sequence number:
	// each is called, on a goroutine of its own, once its completion is
	// polled (grant.go revokes the grant then).
	abandoned map[uint64]func()
}

// newWorkQueue makes the accounting of a queue of depth requests, with
// extra slots beyond depth (the liveness probe's, reserveProbe): the ring
// holds depth+extra, as many as can be outstanding at once, so that no
// outstanding request's slot is another's.
func newWorkQueue(depth, extra int, cq *CQ, qp *qpState, full error) *workQueue {
	size := uint64(1)
	if n := depth + extra; n > 1 {
		size = 1 << bits.Len64(uint64(n-1))
	}
	q := &workQueue{
		depth:  uint64(depth),
		mask:   size - 1,
		ring:   make([]wrSlot, size),
		cq:     cq,
		budget: &cq.budget,
		full:   full,
		qp:     qp,
	}
	q.autoEvery = depth / 2
	if q.autoEvery < 1 {
		q.autoEvery = 1
	}
	return q
}

// room reports whether n more requests fit in the queue and its CQ, or
// the error that says which is full.
func (q *workQueue) room(n uint64) error {
	used := q.posted - q.retired
	if q.probing {
		used--
	}
	if used+n > q.depth {
		return q.full
	}
	if !q.budget.fits(int64(n)) {
		return errCQFull
	}
	return nil
}

// free returns how many more requests fit in the queue and its CQ (a
// submission chain's, combine.go: when not all of its requests fit, the
// first of them that do are posted).
func (q *workQueue) free() uint64 {
	used := q.posted - q.retired
	if q.probing {
		used--
	}
	if used >= q.depth {
		return 0
	}
	f := q.depth - used
	if b := q.budget; b != nil {
		r := b.capacity - b.reserved - b.used
		if r <= 0 {
			return 0
		}
		f = min(f, uint64(r))
	}
	return f
}

// reserve takes n slots and returns the first sequence number.
func (q *workQueue) reserve(n uint64) (uint64, error) {
	if s, ok := q.tryReserve(n); ok {
		return s, nil
	}
	return q.reserveFull(n)
}

// tryReserve is reserve's fast path, small enough to inline into a post:
// it takes n slots when the queue and its CQ stay within their high-water
// marks, and reports false, taking nothing, otherwise. The marks never
// exceed the limits (q.high <= q.depth, b.fast <= what the CQ can take),
// so within them everything fits and no mark moves; a reservation beyond
// one (a new mark, or a full queue) is reserveFull's.
func (q *workQueue) tryReserve(n uint64) (uint64, bool) {
	s, b := q.posted, q.budget
	if s-q.retired+n > q.high || b == nil || b.used+int64(n) > b.fast {
		return 0, false
	}
	q.posted = s + n
	b.used += int64(n)
	return s, true
}

// reserveFull is reserve when the queue or its CQ looks full: with the
// probe outstanding it has a slot beyond depth, and without a budget
// there is none to take; completions that have arrived but were not
// polled yet retire slots too, so it polls the CQ (the caller's
// completions among them are kept in the stash for GetWC).
func (q *workQueue) reserveFull(n uint64) (uint64, error) {
	if err := q.room(n); err != nil {
		if !q.cq.pollIntoStash("cq_reap") {
			return 0, err
		}
		if err := q.room(n); err != nil {
			return 0, err
		}
	}
	s := q.posted
	q.posted += n
	used := q.posted - q.retired
	if q.probing {
		used-- // the probe's slot is beyond depth: q.high must not count it
	}
	q.high = max(q.high, used)
	q.budget.take(int64(n))
	return s, nil
}

// reserveProbe is reserve for the liveness probe (liveness.go): it takes
// the slot kept for the probe beyond depth, whose CQ entry is kept too
// (cqBudget.reserved), so it needs no room and moves no high-water mark
// (q.high counts no probe: tryReserve relies on q.high <= q.depth). It
// reports false, taking nothing, while a probe is outstanding.
func (q *workQueue) reserveProbe() (queuePost, bool) {
	if q.probing {
		return queuePost{}, false
	}
	s := q.posted
	q.posted++
	q.probing, q.probeSeq = true, s
	return queuePost{q: q, s: s, saved: q.unsignaled}, true
}

// signal decides whether a send request is posted signaled: when the
// caller asks for it, or, for a run of unsignaled requests, every
// autoEvery-th one, so that polling always frees the queue.
func (q *workQueue) signal(user bool) bool {
	if user {
		q.unsignaled = 0
		return true
	}
	q.unsignaled++
	if q.unsignaled >= q.autoEvery {
		q.unsignaled = 0
		return true
	}
	return false
}

// claim marks the request with sequence number s, just recorded
// (queuePost.slot), as posted for a waiting caller: its completion goes
// to cl, or is absorbed when cl is nil (claim.go).
func (q *workQueue) claim(s uint64, cl *opClaim) {
	sl := &q.ring[s&q.mask]
	sl.claimed, sl.claim = true, cl
}

// rollback undoes the reservation of the n requests from s after a
// failed post (s+n must be the end of what was reserved); the probe's
// slot among them (reserveProbe) holds no CQ entry.
func (q *workQueue) rollback(s, n uint64, unsignaled int) {
	q.posted = s
	if q.probing && q.probeSeq >= s {
		q.probing = false
		n--
	}
	q.budget.release(int64(n))
	q.unsignaled = unsignaled
}

// complete handles the completion of request s: it retires everything up
// to s and returns the request's slot.
func (q *workQueue) complete(s uint64) wrSlot {
	sl := q.ring[s&q.mask]
	if s+1 > q.retired {
		n := s + 1 - q.retired
		if q.probing && s >= q.probeSeq {
			q.probing = false
			n-- // the probe holds no budget
		}
		q.budget.release(int64(n))
		q.retired = s + 1
	}
	return sl
}

// outstanding returns how many requests are posted and not retired.
func (q *workQueue) outstanding() int { return int(q.posted - q.retired) }

// srqTable accounts for a shared receive queue, under the SRQ's data
// lock: receives complete in any order across the QPs that share it, so
// each posted receive takes a slot of a free list.
type srqTable struct {
	dl     *dataLock
	ctx    []uint64
	free   []uint32
	budget *cqBudget // the SRQ's own RCQ, nil without

	// qps maps the QP number of each connection receiving through the
	// SRQ to its state: a failed receive completes on a CQ that may be
	// the SRQ's, not the connection's, and must break the connection it
	// arrived on (breakQP). Its own lock: only connections' set-up and
	// teardown and failed receives take it.
	qpsMu sync.Mutex
	qps   map[uint32]*qpState
}

// attach records the connection whose QP number is qpn.
func (t *srqTable) attach(qpn uint32, st *qpState) {
	t.qpsMu.Lock()
	defer t.qpsMu.Unlock()
	if t.qps == nil {
		t.qps = make(map[uint32]*qpState)
	}
	t.qps[qpn] = st
}

// detach forgets the connection of qpn, unless the number was given to
// another connection since.
func (t *srqTable) detach(qpn uint32, st *qpState) {
	t.qpsMu.Lock()
	defer t.qpsMu.Unlock()
	if t.qps[qpn] == st {
		delete(t.qps, qpn)
	}
}

// breakQP marks the connection of qpn broken with cause: a receive of
// the SRQ failed on it.
func (t *srqTable) breakQP(qpn uint32, cause error) {
	t.qpsMu.Lock()
	st := t.qps[qpn]
	t.qpsMu.Unlock()
	if st != nil {
		st.breakWith(cause)
	}
}

func newSRQTable(dl *dataLock, depth int, budget *cqBudget) *srqTable {
	t := &srqTable{dl: dl, ctx: make([]uint64, depth), free: make([]uint32, depth), budget: budget}
	for i := range t.free {
		t.free[i] = uint32(depth - 1 - i)
	}
	return t
}

// take takes a free slot for ctx.
func (t *srqTable) take(ctx uint64) (uint32, error) {
	if len(t.free) == 0 {
		return 0, errSRQFull
	}
	if !t.budget.fits(1) {
		return 0, errCQFull
	}
	t.budget.take(1)
	i := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	t.ctx[i] = ctx
	return i, nil
}

// put frees slot i and returns its context.
func (t *srqTable) put(i uint32) uint64 {
	t.free = append(t.free, i)
	t.budget.release(1)
	return t.ctx[i]
}

// complete is put for a completion polled from a CQ under another lock
// (a connection's, when the SRQ has no receive CQ of its own); with the
// SRQ's own receive CQ the caller holds the SRQ's lock already (locked).
func (t *srqTable) complete(i uint32, locked bool) uint64 {
	if !locked {
		t.dl.mu.Lock()
		defer t.dl.mu.Unlock()
	}
	if int(i) >= len(t.ctx) {
		return 0
	}
	return t.put(i)
}
