package core

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// ConnReq mirrors struct rpma_conn_req: a CM id with its queue pair and
// CQs, not yet connected. Active requests come from NewConnReq, passive
// ones from Endpoint.NextConnReq. Either way the request has its own event
// channel, which the connection inherits.
//
// An outgoing request creates its queues at once, as librpma does; an
// incoming one only when it is accepted or a receive is posted on it
// (queuesFor), so that an undecided request holds no QP, CQ or
// registered memory.
type ConnReq struct {
	life
	peer    *Peer
	ev      *connEvents
	id      *ibv.CMID
	qmu     sync.Mutex // creation of q
	q       queues     // q.dl is nil until created
	params  ConnParams
	passive bool
	pdata   []byte // incoming private data (passive only)
	leak    *leak.Handle

	rejected bool // teardown has rejected the incoming request
	torn     bool // teardown has run to its end

	// The endpoint's count of undecided requests, which this one is in
	// until Connect or Close begins (passive only).
	undecided *atomic.Int64
	// The endpoint's count of accepted connections not yet established,
	// which Connect puts the connection in (passive only).
	establishing *atomic.Int64
}

// queuesFor creates the request's queues unless they exist. The caller
// has entered r, or holds its lock.
func (r *ConnReq) queuesFor(op string) error {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	if r.q.dl != nil {
		return nil
	}
	q, err := createQueues(op, r.peer, r.id, &r.params, r.ev)
	if err != nil {
		return err
	}
	r.q = q
	return nil
}

// decided takes a passive request out of its endpoint's undecided count;
// the caller has just begun to close or connect it.
func (r *ConnReq) decided() {
	if r.undecided != nil {
		r.undecided.Add(-1)
		r.undecided = nil // once, even when Close is retried
	}
}

// queues are the verbs objects a request creates for its connection,
// and the accounting of its work queues.
type queues struct {
	dl     *dataLock      // the data path's lock (posts, polls, accounting)
	shared *sharedChannel // the shared completion channel, or nil
	cq     *CQ
	rcq    *CQ // nil when RCQSize is 0
	qpNum  uint32
	qp     *ibv.QP
	state  *qpState
	sq     *workQueue
	rq     *workQueue    // nil with an SRQ
	srq    *SRQ          // nil without
	flush  *flushBuf     // the emulated flush's read target; nil with native flush
	batch  []ibv.BatchWR // a batch's work requests (batch.go), made at the first
	owner  *owner        // what the device's asynchronous events about the QP and CQs reach
	// What the connection does natively (else emulates).
	nativeAtomicWrite bool
	nativeFlush       bool
}

// createQueues creates the CQ, the optional RCQ and the QP of id
// (rpma_conn_req_from_id and rpma_peer_setup_qp), the flush buffer, and
// the accounting of the send and receive queues. Completion waits watch
// ev's channel.
func createQueues(op string, p *Peer, id *ibv.CMID, prm *ConnParams, ev *connEvents) (queues, error) {
	var q queues
	if v := id.Verbs(); !v.Same(p.ctx) {
		name := "no device"
		if v != nil {
			name = v.Name()
		}
		return q, rpmaerr.Inval(op, "the peer is on device %s but the connection goes through %s", p.dev.name, name)
	}
	if err := prm.checkFor(op, p); err != nil {
		return q, err
	}
	if s := prm.SRQ; s != nil {
		if err := s.acquire(op); err != nil {
			return q, err
		}
		q.srq = s
	}
	fail := func(err error) (queues, error) {
		q.destroy(nil)
		return queues{}, err
	}
	var err error
	q.dl = &dataLock{tune: p.tune, period: yieldCounts.Load()}
	var sharedCh *ibv.CompChannel
	if prm.SharedCompChannel {
		if q.shared, err = newSharedChannel(op, p.ctx, ev, p.tune, prm.WaitMode == WaitThread); err != nil {
			return fail(err)
		}
		sharedCh = q.shared.ch
	}
	if q.cq, err = newCQ(op, p.ctx, q.dl, prm.CQSize+prm.probeSlots(), sharedCh, prm.WaitMode == WaitThread, prm.SpinLimit, ev.ch.fd, ev.termFD); err != nil {
		return fail(err)
	}
	if prm.RCQSize > 0 {
		if q.rcq, err = newCQ(op, p.ctx, q.dl, prm.RCQSize, sharedCh, prm.WaitMode == WaitThread, prm.SpinLimit, ev.ch.fd, ev.termFD); err != nil {
			return fail(err)
		}
	}
	if q.shared != nil {
		q.shared.cq, q.shared.rcq = q.cq, q.rcq
		q.cq.sc = q.shared
		if q.rcq != nil {
			q.rcq.sc = q.shared
		}
	}
	q.cq.maxCQE = p.attr.MaxCQE
	if q.rcq != nil {
		q.rcq.maxCQE = p.attr.MaxCQE
	}
	recvCQ := q.cq
	if q.rcq != nil {
		recvCQ = q.rcq
	}
	attr := ibv.QPInitAttr{
		PD:            p.pd,
		SendCQ:        q.cq.ibvCQ(),
		RecvCQ:        recvCQ.ibvCQ(),
		MaxSendWR:     uint32(prm.SQSize + prm.probeSlots()),
		MaxRecvWR:     uint32(prm.RQSize),
		MaxSendSGE:    maxSGE,
		MaxRecvSGE:    maxSGE,
		MaxInlineData: maxInlineData,
	}
	if q.srq != nil {
		attr.SRQ = q.srq.srq
		if q.srq.rcq != nil {
			attr.RecvCQ = q.srq.rcq.ibvCQ()
		}
	}
	if p.nativeAtomicWrite {
		attr.SendOpsFlags |= ibv.QPExWithAtomicWrite
	}
	if p.nativeFlush {
		attr.SendOpsFlags |= ibv.QPExWithFlush
	}
	if _, err := id.CreateQP(&attr); err != nil {
		return fail(providerMsg(op, err,
			"max_send_wr=%d, max_recv_wr=%d, max_send/recv_sge=%d, max_inline_data=%d, qp_type=IBV_QPT_RC, sq_sig_all=0",
			prm.SQSize, prm.RQSize, maxSGE, maxInlineData))
	}
	q.qpNum = id.QPNum()
	q.qp = id.QP(attr.SendOpsFlags != 0)
	q.nativeAtomicWrite = p.nativeAtomicWrite && q.qp.HasAtomicWrite()
	q.nativeFlush = p.nativeFlush && q.qp.HasFlush()
	if !q.nativeFlush {
		if q.flush, err = newFlushBuf(p); err != nil {
			id.DestroyQP()
			return fail(err)
		}
	}

	// Accounting: the send queue's completions go to the CQ; receives to
	// the receive CQ, or, with an SRQ, to the SRQ's RCQ (accounted by the
	// SRQ) or to this connection's receive CQ.
	q.state = &qpState{}
	q.sq = newWorkQueue(prm.SQSize, prm.probeSlots(), q.cq, q.state, errSQFull)
	q.cq.sq = q.sq
	q.cq.budget.reserved += int64(prm.probeSlots()) // the probe's completion
	q.cq.budget.setLimits()
	switch {
	case q.srq == nil:
		q.rq = newWorkQueue(prm.RQSize, 0, recvCQ, q.state, errRQFull)
		recvCQ.rq = q.rq
	case q.srq.rcq == nil:
		recvCQ.srq = q.srq.tbl
		recvCQ.budget.reserved = int64(q.srq.size) // checkSRQRoom made room
		recvCQ.budget.setLimits()
	}
	ends := &endFlush{qp: q.qp}
	q.cq.ev, q.cq.ends = ev, ends
	if q.rcq != nil {
		q.rcq.ev, q.rcq.ends = ev, ends
	}
	if q.srq != nil {
		q.srq.tbl.attach(q.qpNum, q.state)
	}
	st := q.state
	ev.onTerm = func(e rpma.ConnEvent) { st.breakWith(&rpma.ConnEventError{Event: e}) }
	q.owner = registerOwner(p.ctx, &q, ev, id)
	return q, nil
}

// checkFor checks prm for connections of p, before anything is created
// or waited for: the device's limits and the SRQ's rules.
func (prm *ConnParams) checkFor(op string, p *Peer) error {
	if err := prm.checkDevice(op, p); err != nil {
		return err
	}
	if s := prm.SRQ; s != nil {
		if prm.SharedCompChannel && s.rcq != nil {
			return rpmaerr.Inval(op, "a shared completion channel cannot be used with an SRQ that has its own receive CQ")
		}
		if s.peer != p {
			return rpmaerr.Inval(op, "the SRQ belongs to another peer")
		}
		if err := checkSRQRoom(op, prm, s); err != nil {
			return err
		}
	}
	return nil
}

// checkSRQRoom refuses a connection whose receives complete, through an
// SRQ without a receive CQ of its own, on a CQ of the connection that
// could overrun: a post cannot know which connection's CQ an SRQ receive
// will complete on, so the CQ must hold every receive the SRQ can have
// outstanding, besides the send queue's completions when they share it.
func checkSRQRoom(op string, prm *ConnParams, s *SRQ) error {
	if s.rcq != nil {
		return nil
	}
	if prm.RCQSize > 0 {
		if prm.RCQSize < s.size {
			return rpmaerr.Inval(op, "RCQSize %d is below the SRQ's RQSize %d: every receive of the SRQ (which has no receive CQ of its own) may complete on this connection's receive CQ", prm.RCQSize, s.size)
		}
		return nil
	}
	if prm.CQSize < prm.SQSize+s.size {
		return rpmaerr.Inval(op, "CQSize %d is below SQSize %d + the SRQ's RQSize %d: every receive of the SRQ (which has no receive CQ of its own) may complete on this connection's CQ, besides the sends", prm.CQSize, prm.SQSize, s.size)
	}
	return nil
}

// librpma's QP limits (src/peer.c).
const (
	maxSGE        = 1 // RPMA_MAX_SGE
	maxInlineData = 8 // RPMA_MAX_INLINE_DATA
)

// destroy destroys the QP of id (when id is not nil), the flush buffer,
// the CQs and the shared channel, in librpma's order, and lets go of the
// SRQ. It stops at the first failure and keeps what is left, so that a
// second call (a retried Close) finishes the job.
func (q *queues) destroy(id *ibv.CMID) error {
	if q.dl != nil {
		// Posts and polls refuse from now on; the one in flight has
		// finished.
		q.dl.mu.Lock()
		q.dl.closed = true
		if q.sq != nil {
			q.dl.stats.sqHigh = q.sq.high // for Stats after Close
		}
		q.dl.mu.Unlock()
	}
	q.unregister()
	if id != nil {
		id.DestroyQP()
	}
	// Completions nobody polled still hold slots: an SRQ's receives among
	// them would be lost to the SRQ for good.
	q.rcq.drain()
	q.cq.drain()
	for _, step := range []func() error{q.flush.destroy, q.rcq.close, q.cq.close, q.shared.destroy} {
		if err := step(); err != nil {
			return err
		}
	}
	if q.srq != nil {
		q.srq.tbl.detach(q.qpNum, q.state)
		q.srq.release()
	}
	*q = queues{}
	return nil
}

// NewConnReq mirrors rpma_conn_req_new: it resolves addr and port within
// params.Timeout (and ctx) and creates the request's queues.
func NewConnReq(ctx context.Context, p *Peer, addr, port string, params *ConnParams) (*ConnReq, error) {
	const op = "conn_req_new"
	if ctx == nil {
		return nil, errNil(op, "context")
	}
	if addr == "" {
		return nil, rpmaerr.Inval(op, "empty address")
	}
	if port == "" {
		return nil, rpmaerr.Inval(op, "empty port")
	}
	prm, err := ResolveParams(op, params)
	if err != nil {
		return nil, err
	}
	if err := p.acquire(op); err != nil {
		return nil, err
	}
	if err := prm.checkFor(op, p); err != nil {
		p.release()
		return nil, err
	}
	r, err := newActive(ctx, op, p, addr, port, &prm)
	if err != nil {
		p.release()
		return nil, err
	}
	rpma.Logf(rpma.LogNotice, "Requesting a connection to %s:%s", addr, port)
	return r, nil
}

func newActive(ctx context.Context, op string, p *Peer, addr, port string, prm *ConnParams) (*ConnReq, error) {
	ai, err := ibv.GetAddrInfo(addr, port, false)
	if err != nil {
		return nil, providerMsg(op, err, "node=%s, service=%s, active", addr, port)
	}
	defer ai.Free()
	ch, err := newCMChannel(op)
	if err != nil {
		return nil, err
	}
	id, err := ibv.CreateID(ch.ch)
	if err != nil {
		ch.destroy()
		return nil, provider(op, err)
	}
	fail := func(err error) (*ConnReq, error) {
		id.Destroy()
		ch.destroy()
		return nil, err
	}
	ms := prm.timeoutMs()
	if err := id.ResolveAddr(ai, ms); err != nil {
		return fail(providerMsg(op, err, "%s:%s, timeout %d ms", addr, port, ms))
	}
	if err := await(ctx, ch, op, ibv.EventAddrResolved, ibv.EventAddrError, "rdma_resolve_addr"); err != nil {
		return fail(err)
	}
	if err := id.ResolveRoute(ms); err != nil {
		return fail(providerMsg(op, err, "timeout %d ms", ms))
	}
	if err := await(ctx, ch, op, ibv.EventRouteResolved, ibv.EventRouteError, "rdma_resolve_route"); err != nil {
		return fail(err)
	}
	ev, err := newConnEvents(op, ch, nil)
	if err != nil {
		return fail(err)
	}
	q, err := createQueues(op, p, id, prm, ev)
	if err != nil {
		ev.closeFDs()
		return fail(err)
	}
	r := &ConnReq{
		peer:   p,
		ev:     ev,
		id:     id,
		q:      q,
		params: *prm,
		leak:   leak.Track("conn.ConnReq"),
	}
	r.open()
	return r, nil
}

// await waits for the outcome of an asynchronous resolution: the ok
// event, or the failure event whose status becomes the errno of call.
func await(ctx context.Context, ch *cmChannel, op string, ok, fail ibv.CMEventType, call string) error {
	ev, err := ch.next(ctx, op, "connection request")
	if err != nil {
		return err
	}
	switch ev.Type {
	case ok:
		return nil
	case fail:
		return rpmaerr.Provider(call, statusErrno(ev.Status))
	default:
		return rpmaerr.New(op, rpma.CodeUnknown, 0, "unexpected %s while waiting for %s", ev.Type, ok)
	}
}

// newPassive builds an incoming request from a CONNECT_REQUEST event of an
// endpoint (rpma_conn_req_new_from_cm_event), without its queues. The new
// id is moved to its own event channel at once, so that its events never
// reach the endpoint. On failure the request is rejected and destroyed.
// The request is one of the endpoint's undecided ones.
func newPassive(op string, p *Peer, cm *ibv.CMEvent, prm *ConnParams, undecided, establishing *atomic.Int64) (*ConnReq, error) {
	id := cm.ID
	fail := func(ch *cmChannel, err error) (*ConnReq, error) {
		id.Reject(nil)
		id.Destroy()
		ch.destroy()
		return nil, err
	}
	if err := p.acquire(op); err != nil {
		return fail(nil, err)
	}
	ch, err := newCMChannel(op)
	if err != nil {
		p.release()
		return fail(nil, err)
	}
	if err := id.Migrate(ch.ch); err != nil {
		p.release()
		return fail(ch, provider(op, err))
	}
	ev, err := newConnEvents(op, ch, cm.PrivateData)
	if err != nil {
		p.release()
		return fail(ch, err)
	}
	r := &ConnReq{
		peer:         p,
		ev:           ev,
		id:           id,
		params:       *prm,
		passive:      true,
		pdata:        cm.PrivateData,
		leak:         leak.Track("conn.ConnReq"),
		undecided:    undecided,
		establishing: establishing,
	}
	r.open()
	return r, nil
}

// IsPassive reports whether r is an incoming request (from an endpoint).
func (r *ConnReq) IsPassive() bool { return r != nil && r.passive }

// PrivateData is conn.ConnReq.PrivateData's core; see there.
func (r *ConnReq) PrivateData() []byte {
	if r == nil || r.pdata == nil {
		return nil
	}
	return append([]byte(nil), r.pdata...)
}

// PeerAddr returns the address of the other side.
func (r *ConnReq) PeerAddr() netip.AddrPort {
	if r == nil || !r.enter() {
		return netip.AddrPort{}
	}
	defer r.exit()
	return r.id.PeerAddr()
}

// Connect is conn.ConnReq.Connect's core (see there): past its argument checks it consumes r.
func (r *ConnReq) Connect(pdata []byte) (*Conn, error) {
	const op = "conn_req_connect"
	if r == nil {
		return nil, errNil(op, "connection request")
	}
	if err := checkPrivateData(op, pdata, r.passive); err != nil {
		return nil, err
	}
	if !r.consume() {
		return nil, errClosed(op, "connection request")
	}
	r.decided()
	r.lock()
	defer r.unlock()
	if err := r.queuesFor(op); err != nil {
		if terr := r.teardown(); terr != nil {
			rpma.Logf(rpma.LogWarning, "%s: cleaning up after a failed connect: %v", op, terr)
		}
		return nil, err
	}

	// The connection takes over the channel (nothing waits on a request's
	// channel once it is built), the id and the queues.
	c := &Conn{
		dl:                r.q.dl,
		peer:              r.peer,
		ev:                r.ev,
		id:                r.id,
		q:                 r.q,
		passive:           r.passive,
		cq:                r.q.cq,
		rcq:               r.q.rcq,
		srq:               r.q.srq,
		state:             r.q.state,
		qpNum:             r.q.qpNum,
		nativeAtomicWrite: r.q.nativeAtomicWrite,
		nativeFlush:       r.q.nativeFlush,
	}
	prm := ibv.ConnParam{
		PrivateData:        pdata,
		ResponderResources: ibv.MaxRespRes,
		InitiatorDepth:     ibv.MaxInitDepth,
		FlowControl:        1,
		RetryCount:         uint8(r.params.RetryCount),
		RNRRetryCount:      uint8(r.params.RNRRetryCount),
	}
	var err error
	if r.params.AckTimeout > 0 {
		// On either side: each side's QP times out its own requests.
		err = r.id.SetAckTimeout(AckTimeoutExponent(r.params.AckTimeout))
	}
	switch {
	case err != nil:
	case r.passive:
		err = r.id.Accept(&prm)
	default:
		err = r.id.Connect(&prm)
	}
	if err != nil {
		err = provider(op, err)
		if terr := r.teardown(); terr != nil {
			rpma.Logf(rpma.LogWarning, "%s: cleaning up after a failed connect: %v", op, terr)
		}
		return nil, err
	}
	r.leak.Release()
	c.leak = leak.Track("conn.Conn")
	c.open()
	if r.passive {
		c.watchEstablishment(&r.params, r.establishing)
	}
	c.startLiveness(r.params.PeerTimeout)
	return c, nil
}

// teardown destroys everything the request holds (rpma_conn_req_delete):
// the QP and CQs, then rejects an incoming request or destroys an outgoing
// one's id, then the channel. The caller holds the lock. A failed reject
// is reported and the id destroyed all the same (which rejects it too); a
// failed destroy stops it, keeping the rest for a second call.
func (r *ConnReq) teardown() error {
	if err := r.q.destroy(r.id); err != nil {
		return err
	}
	var errs errList
	if r.passive && !r.rejected {
		errs.add(provider("conn_req_delete", r.id.Reject(nil)))
		r.rejected = true
	}
	if err := r.id.Destroy(); err != nil {
		errs.add(provider("conn_req_delete", err))
		return errs.err()
	}
	r.ev.destroy()
	r.peer.release()
	r.leak.Release()
	r.torn = true
	return errs.err()
}

// Close is conn.ConnReq.Close's core; see there.
func (r *ConnReq) Close() error {
	if r == nil || !r.beginClose() {
		return nil
	}
	r.decided()
	r.ev.wake()
	r.lock()
	defer r.unlock()
	err := r.teardown()
	if !r.torn {
		r.closeFailed() // a retried Close destroys what is left
	}
	return err
}
