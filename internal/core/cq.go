package core

import (
	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
)

// CQ mirrors struct rpma_cq: a completion queue and its completion channel
// (its own, or the connection's shared one). CQs are created armed
// (ibv_req_notify_cq) with their connection and destroyed by it.
type CQ struct {
	life
	cq     *ibv.CQ
	ch     *ibv.CompChannel
	w      *waiter // nil when the channel is shared (the owner waits)
	shared bool
	fd     int
	size   int
	leak   *leak.Handle
}

// newCQ creates a CQ of at least cqe entries with its own completion
// channel, or on shared when it is not nil.
func newCQ(op string, ctx *ibv.Context, cqe int, shared *ibv.CompChannel) (*CQ, error) {
	q := &CQ{ch: shared, shared: shared != nil}
	if shared == nil {
		ch, err := ctx.CreateCompChannel()
		if err != nil {
			return nil, provider(op, err)
		}
		w, err := newWaiter(ch.FD(), "ibv_comp_channel")
		if err != nil {
			ch.Destroy()
			return nil, provider(op, err)
		}
		q.ch, q.w = ch, w
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
	q.fd = q.ch.FD()
	q.size = cq.CQE()
	q.leak = leak.Track("cq.CQ")
	return q, nil
}

func (q *CQ) destroyChannel() error {
	if q.shared {
		return nil
	}
	q.w.close()
	return q.ch.Destroy()
}

// FD mirrors rpma_cq_get_fd: the completion channel's fd (the shared one
// when the channel is shared), or -1 when q is nil or closed.
func (q *CQ) FD() int {
	if q == nil || q.closed() {
		return -1
	}
	return q.fd
}

// Size returns the number of entries the CQ actually has (the provider may
// round the requested size up), or 0 when q is nil.
func (q *CQ) Size() int {
	if q == nil {
		return 0
	}
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
	var errs errList
	errs.add(provider("cq_delete", q.cq.Destroy()))
	errs.add(provider("cq_delete", q.destroyChannel()))
	q.leak.Release()
	return errs.err()
}
