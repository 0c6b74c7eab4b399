package core

import (
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
)

// The post protocol. Every work request the library posts takes these
// steps, in this order, under the data lock of its connection (or
// connection request): the data path's single requests (Conn.postSend),
// the chains (Conn.postWriteFlush, Conn.postBatch, and the waiting calls'
// combined requests, Conn.postChain in combine.go), a grant's bind
// (Conn.bind), the liveness probe (Conn.probe) and the receives
// (queues.recv).
//
//  1. Lock: lockData, which refuses a closed or broken connection. The
//     probe runs in the liveness tick, ConnReq.Recv in the request's
//     set-up: both hold the lock already.
//  2. Reserve: workQueue.reserve takes the queue's slots and their CQ
//     entries (cqBudget), or refuses for room, counted in QueueFull
//     (a grant's bind is not counted: it is no caller's post). The
//     probe's workQueue.reserveProbe takes the slot kept for it beyond
//     depth, whose CQ entry is kept too (cqBudget.reserved). A post on a
//     send queue keeps its first slot and the run of unsignaled requests
//     before it (queuePost), for step 5.
//  3. Slots: for each request, in order, decide whether it is signaled
//     (workQueue.signal) and record it in its slot (queuePost.slot,
//     record, claim). This is before the crossing, whose reap may already
//     complete it.
//  4. Cross: one cgo call posts the requests and reaps the CQ into
//     CQ.reap (a receive does not reap).
//  5. Roll back what the provider refused (workQueue.rollback): those
//     slots, their CQ entries (the probe's holds none) and the run of
//     unsignaled requests. What it accepted stays: a later completion
//     retires it, as any other.
//  6. Account the reap (CQ.reaped), after the rollback, so that its
//     completions meet the queue as the provider has it.
//  7. On failure build the error (postError, which breaks the connection
//     of a QP in the error state); on success count the post
//     (dataLock.posted).
//  8. Unlock, and yield when due (dataLock.unlockAfterCrossing).
//
// postSend, the busy poller's path, runs the steps in one frame, with
// the fast paths of steps 1, 2 and 8 inline (see there); its helpers,
// queuePost's methods among them, inline into it.

// queuePost is one post on a work queue between steps 2 and 5: its
// first slot's sequence number, and the run of unsignaled requests before
// it (a send queue's; a receive queue's is 0), which a rollback of the
// whole post restores. A value, so that it stays in registers when its
// methods inline.
type queuePost struct {
	q     *workQueue
	s     uint64
	saved int
}

// open is step 2 (d.mu held): it reserves n slots, or returns why not.
func (q *workQueue) open(n uint64) (queuePost, error) {
	s, err := q.reserve(n)
	return queuePost{q: q, s: s, saved: q.unsignaled}, err
}

// wrID is the work request id of the post's i-th request on a send
// queue (a receive's is wrKindRQ | its sequence number).
func (p queuePost) wrID(i uint64) uint64 { return wrKindSQ | (p.s + i) }

// slot is step 3 for the post's i-th request on a send queue: it decides
// whether the request is signaled (always when signal, else every
// autoEvery-th of a run) and returns its IBV_SEND_SIGNALED flag, and the
// request's slot, for the caller to record the request in.
func (p queuePost) slot(i uint64, signal bool) (*wrSlot, uint32) {
	var f uint32
	if p.q.signal(signal) {
		f = ibv.SendSignaled
	}
	return p.record(i), f
}

// record is the slot of the post's i-th request: a receive's step 3 (a
// receive is always signaled).
func (p queuePost) record(i uint64) *wrSlot { return &p.q.ring[(p.s+i)&p.q.mask] }

// claim marks the post's i-th request as posted for a waiting caller
// (workQueue.claim).
func (p queuePost) claim(i uint64, cl *opClaim) { p.q.claim(p.s+i, cl) }

// rollback is step 5 when the provider accepted the post's first i of
// its n requests (i < n): it rolls back the others, and leaves the run of
// unsignaled requests as it was after the accepted ones (p.saved when
// none was).
func (p queuePost) rollback(i, n uint64, unsignaled int) {
	p.q.rollback(p.s+i, n-i, unsignaled)
}

// postError is step 7's error: it turns the errno of a failed post into
// an error. A full queue in the provider's view (ENOMEM from
// ibv_post_send, ENOSPC from the extended API's ibv_wr_complete, as rxe
// returns them) is rpma.ErrQueueFull; a QP in the error state marks the
// connection broken.
func postError(call string, errno syscall.Errno, qp *ibv.QP, st *qpState) error {
	if errno == syscall.ENOMEM || errno == syscall.ENOSPC {
		return errSQFull
	}
	if qp != nil && st != nil {
		if s, err := qp.State(); err == nil && s == ibv.QPStateErr {
			st.breakWith(rpmaerr.Provider(call, errno))
			return st.err()
		}
	}
	return rpmaerr.Provider(call, errno)
}

// postCall names the call whose failure a post reports: the extended
// API's posts (native atomic write and flush) fail in ibv_wr_complete.
func postCall(extended bool) string {
	if extended {
		return "ibv_wr_complete"
	}
	return "ibv_post_send"
}
