package cq

import (
	"context"

	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/rpma"
)

// CQ mirrors struct rpma_cq: a completion queue of a connection (its main
// CQ or its receive CQ) or of an SRQ (its receive CQ), with its
// completion channel. CQs are created, armed (ibv_req_notify_cq) and
// destroyed by their connection or SRQ: get them with conn.Conn.CQ,
// conn.Conn.RCQ and srq.SRQ.RCQ, and do not use them after their owner's
// Close. There is no CQ.Close.
//
// A CQ is safe for concurrent use by multiple goroutines: GetWC calls are
// serialized, Wait may be called by several goroutines at once (see the
// package's wait contract), and GetWC and Wait may run at the same time
// (the usual split: one goroutine waits and polls while others post).
type CQ core.CQ

func (q *CQ) core() *core.CQ { return (*core.CQ)(q) }

// FD mirrors rpma_cq_get_fd: the fd of the CQ's completion channel (the
// connection's shared channel when conn.Config.SharedCompChannel is set),
// non-blocking and ready for epoll. It returns -1 when q is nil or its
// owner is closed. An event loop needs an event for every completion, so
// from the first FD (or TryWait) on the CQ stays armed for good: Wait's
// lazy arming while it spins (conn.Config.SpinLimit) ends.
func (q *CQ) FD() int { return q.core().FD() }

// Size returns the number of entries the CQ actually has: the provider may
// round the configured size up (rxe makes 10 into 15). It returns 0 when
// q is nil.
func (q *CQ) Size() int { return q.core().Size() }

// Wait mirrors rpma_cq_wait: it waits for the CQ's next completion event,
// acknowledges it and re-arms the CQ (ibv_get_cq_event,
// ibv_ack_cq_events, ibv_req_notify_cq). Then drain the CQ with GetWC
// until it returns [rpma.ErrNoCompletion]. Before it parks, a wait that
// finds nothing polls the CQ for a while (conn.Config.SpinLimit); while
// that spin is on, the CQ is armed only just before a wait parks, and
// events are acknowledged in batches.
//
// Completion events are edge notifications, so use Wait in a
// poll-then-wait loop: completions that arrived before the CQ was re-armed
// raise no event, and an event may come for completions already polled
// (a spurious wake-up: GetWC then finds nothing, which is benign):
//
//	for {
//		n, err := q.GetWC(wcs)
//		if errors.Is(err, rpma.ErrNoCompletion) {
//			if err := q.Wait(ctx); err != nil {
//				return err
//			}
//			continue
//		}
//		...
//	}
//
// The wait parks the goroutine in Go's runtime poller and returns
// ctx.Err() when ctx is done. Several goroutines may wait at once, each
// with its own context (see the package's wait contract): an event wakes
// them all, and Wait also returns nil at once when completions wait to be
// polled. For a connection's CQ it also watches the
// connection's events: when the other side disconnects or its process
// dies (CLOSED or LOST, which rxe reports a few tens of milliseconds after
// a peer process is killed), Wait returns a *rpma.ConnEventError (it
// matches rpma.ErrConnBroken) instead of sleeping on a CQ that will never
// fire; the event stays available to conn.Conn.NextEvent. Completions
// still queued (flush errors of outstanding operations) can be drained
// with GetWC after that error. An SRQ's receive CQ watches no connection.
//
// Errors: with a shared completion channel Wait returns an error matching
// [rpma.ErrSharedChannel] (use conn.Conn.Wait); a failure to read the
// event matches [rpma.ErrNoCompletion], to re-arm [rpma.ErrProvider]; a
// closed CQ matches os.ErrClosed.
func (q *CQ) Wait(ctx context.Context) error { return q.core().Wait(ctx) }

// TryWait is Wait that does not block, for event loops (rpma_cq_wait on a
// non-blocking fd): it reads one pending completion event, acknowledges
// it and re-arms the CQ, and returns nil (then drain with GetWC); with no
// event pending and nothing reaped it returns an error matching
// [rpma.ErrNoCompletion]. After it, [CQ.FD] is no longer readable for that
// event. While another goroutine is blocked in Wait on the CQ, TryWait
// leaves pending events to it. The other errors are Wait's.
func (q *CQ) TryWait() error { return q.core().TryWait() }

// GetWC mirrors rpma_cq_get_wc: it polls up to len(wc) work completions
// into wc, in one cgo crossing, and returns how many it got; with none it
// returns 0 and [rpma.ErrNoCompletion]. In steady state it does not
// allocate.
//
// Each completion carries the op context of its operation (librpma's
// op_context, the uint64 given to the posting call), its status (check
// WC.Err), opcode, byte length (receives), immediate data in host order,
// and flags. Completions the library asked for itself (see
// conn.Conn.Write on unsignaled operations) are absorbed: they retire
// queue slots but are not returned.
func (q *CQ) GetWC(wc []WC) (int, error) {
	// A nil q reaches core's GetWC, which reports it, and a nil or empty
	// wc an empty slice, which it refuses.
	return q.core().GetWC(wc)
}

// WaitFor waits for the completion of the operation posted with
// opContext on q (posted signaled, rpma.CompletionAlways, or one that
// fails) and returns it; every other completion stays queued for its
// own caller (GetWC returns it, another WaitFor takes it). Any number of
// goroutines may wait at once on one CQ, each for its own op context,
// while others post, poll with GetWC or Wait: a completion goes to the
// WaitFor of its op context, never to another caller, and it is
// returned once. Give each outstanding operation an op context of its
// own: WaitFor calls with one op context take its completions one each,
// in the order they began.
//
// A failed completion is returned with an error matching
// [rpma.ErrConnBroken] and [rpma.ErrCompletion] (the connection's first
// failure as its cause). The wait ends with ctx (ctx.Err()), with the
// end of the connection when no completion can come any more (a
// *rpma.ConnEventError) and with the owner's Close (os.ErrClosed).
// Unlike Wait, it also works on a CQ whose completion channel is shared.
// Completions the caller leaves unclaimed (signaled operations nobody
// waits for) must be drained with GetWC: the CQ keeps at most Size of
// them.
func (q *CQ) WaitFor(ctx context.Context, opContext uint64) (WC, error) {
	wc, err := q.core().WaitFor(ctx, opContext)
	return wc, err
}

// Resize resizes the CQ to at least n entries (ibv_resize_cq); Size then
// reports what the provider granted (rxe rounds up: 10 becomes 15, 100
// becomes 127). n must be at least 1 and within the device's max_cqe,
// else the error matches [rpma.ErrInvalidArgument]. A size below the
// completions the CQ holds is refused by the provider (rxe: EINVAL); this
// method refuses earlier and more: n must cover every work request that
// is outstanding on the CQ's queues (each can still complete, at least
// with an error) plus the completions not yet polled, else the error
// matches [rpma.ErrInvalidArgument] and EINVAL and says how many there
// are. Other provider failures match [rpma.ErrProvider] and their errno.
//
// A connection's send-queue depth (conn.Config.SQSize), plus its
// receive-queue depth when receives complete on the same CQ, should stay
// within the CQ's size: the library never lets more work requests be
// outstanding than the CQ can hold (a post beyond that gets
// rpma.ErrQueueFull), so a CQ shrunk below the queue depth caps it.
func (q *CQ) Resize(n int) error { return q.core().Resize(n) }

// WC is a work completion (struct ibv_wc, as librpma's rpma_cq_get_wc
// returns it): [rpma.WC], whose Err method reports a failed one.
type WC = rpma.WC

// WithImm is the IBV_WC_WITH_IMM flag of WC.Flags: the completion carries
// immediate data (send with immediate, write with immediate). It is
// [rpma.WCWithImm].
const WithImm = rpma.WCWithImm
