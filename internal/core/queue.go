package core

import (
	"fmt"
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

// cqBudget guards a CQ against overrun: every work request that can put
// a completion on the CQ (all of them can, on error) holds one entry from
// its post until the completion that retires it is polled. Its lock is
// the innermost of the library's (nothing is locked under it but a
// resize), so CQ.Resize can hold it across the check and the resize,
// atomically with respect to posts.
type cqBudget struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	reserved int64 // entries kept for receives no post can account for (an SRQ's)
}

func (b *cqBudget) reserve(n int64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	ok := b.used+n <= b.capacity-b.reserved
	if ok {
		b.used += n
	}
	b.mu.Unlock()
	return ok
}

func (b *cqBudget) release(n int64) {
	if b != nil && n > 0 {
		b.mu.Lock()
		b.used -= n
		b.mu.Unlock()
	}
}

// outstanding returns the entries held.
func (b *cqBudget) outstanding() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
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

func (e *brokenError) Unwrap() error { return rpma.ErrConnBroken }

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
	ctx  uint64 // the caller's op context
	user bool   // the caller asked for a completion on success
}

// workQueue accounts for the send or the receive queue of one QP. Work
// requests complete in order on an RC QP, so a completion for sequence
// number s retires every request up to s, signaled or not.
//
// Posters hold mu; the poller of the CQ (one at a time, under the CQ's
// lock) writes retired. ring[s%depth] is written before posted is stored
// and read after posted is loaded, which orders the two for the race
// detector as the hardware orders them for real.
type workQueue struct {
	mu      sync.Mutex
	depth   uint64
	ring    []wrSlot
	posted  atomic.Uint64
	retired atomic.Uint64
	cq      *CQ // its completions go to
	budget  *cqBudget
	full    error
	qp      *qpState

	// Send queues only: the run of unsignaled requests since the last
	// signaled one, and the run length that gets a request signaled.
	unsignaled int
	autoEvery  int
}

func newWorkQueue(depth int, cq *CQ, qp *qpState, full error) *workQueue {
	q := &workQueue{
		depth:  uint64(depth),
		ring:   make([]wrSlot, depth),
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

// reserve takes n slots (mu held) and returns the first sequence number.
// When the queue (or its CQ) is full it first reaps the CQ: completions
// that have arrived but were not polled yet retire slots too (the
// caller's completions among them are kept for GetWC).
func (q *workQueue) reserve(n uint64) (uint64, error) {
	s, err := q.tryReserve(n)
	if err != nil && q.cq.reap() {
		s, err = q.tryReserve(n)
	}
	return s, err
}

func (q *workQueue) tryReserve(n uint64) (uint64, error) {
	p := q.posted.Load()
	if p-q.retired.Load()+n > q.depth {
		return 0, q.full
	}
	if !q.budget.reserve(int64(n)) {
		return 0, errCQFull
	}
	return p, nil
}

// signal decides whether a send request is posted signaled (mu held):
// when the caller asks for it, or, for a run of unsignaled requests, every
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

// set records the request with sequence number s (mu held).
func (q *workQueue) set(s uint64, ctx uint64, user bool) {
	q.ring[s%q.depth] = wrSlot{ctx: ctx, user: user}
}

// commit publishes sequence numbers below end (mu held).
func (q *workQueue) commit(end uint64) { q.posted.Store(end) }

// rollback undoes a reservation of n from s after a failed post (mu held).
func (q *workQueue) rollback(s, n uint64, unsignaled int) {
	q.posted.Store(s)
	q.budget.release(int64(n))
	q.unsignaled = unsignaled
}

// complete handles the completion of request s (the CQ's poller): it
// retires everything up to s and returns the request's slot.
func (q *workQueue) complete(s uint64) wrSlot {
	_ = q.posted.Load() // pairs with commit: the slot was written before
	sl := q.ring[s%q.depth]
	r := q.retired.Load()
	if s+1 > r {
		q.retired.Store(s + 1)
		q.budget.release(int64(s + 1 - r))
	}
	return sl
}

// outstanding returns how many requests are posted and not retired.
func (q *workQueue) outstanding() int {
	return int(q.posted.Load() - q.retired.Load())
}

// srqTable accounts for a shared receive queue: receives complete in any
// order across the QPs that share it, so each posted receive takes a slot
// of a free list.
type srqTable struct {
	mu     sync.Mutex
	ctx    []uint64
	free   []uint32
	budget *cqBudget // the SRQ's own RCQ, nil without
}

func newSRQTable(depth int, budget *cqBudget) *srqTable {
	t := &srqTable{ctx: make([]uint64, depth), free: make([]uint32, depth), budget: budget}
	for i := range t.free {
		t.free[i] = uint32(depth - 1 - i)
	}
	return t
}

// take takes a free slot for ctx (mu held).
func (t *srqTable) take(ctx uint64) (uint32, error) {
	if len(t.free) == 0 {
		return 0, errSRQFull
	}
	if !t.budget.reserve(1) {
		return 0, errCQFull
	}
	i := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	t.ctx[i] = ctx
	return i, nil
}

// put frees slot i (mu held) and returns its context.
func (t *srqTable) put(i uint32) uint64 {
	t.free = append(t.free, i)
	t.budget.release(1)
	return t.ctx[i]
}

// complete is put under the lock, for the CQ's poller.
func (t *srqTable) complete(i uint32) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if int(i) >= len(t.ctx) {
		return 0
	}
	return t.put(i)
}
