package core

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Endpoint mirrors struct rpma_ep: a listening CM id on its own event
// channel.
type Endpoint struct {
	life
	peer *Peer
	ch   *cmChannel
	id   *ibv.CMID
	addr netip.AddrPort
	leak *leak.Handle

	// The cap on undecided requests: those NextConnReq returned that are
	// neither connected nor closed. Requests keep a pointer to undecided,
	// which may outlive the endpoint.
	maxUndecided int64
	undecided    *atomic.Int64
	refused      atomic.Uint64
	// The cap on accepted connections not yet established
	// (establish.go), counted the same way.
	maxEstablishing int64
	establishing    *atomic.Int64
}

// ListenParams are an endpoint's settings beyond librpma's (zero values:
// librpma's behaviour).
type ListenParams struct {
	// Backlog is rdma_listen's backlog: connection requests the kernel
	// queues for the endpoint until NextConnReq takes them. 0 is
	// librpma's, which the kernel reads as its maximum
	// (net.rdma_ucm.max_backlog, 1024 by default).
	Backlog int
	// MaxUndecided caps the requests NextConnReq has returned that are
	// neither connected nor closed; past it, NextConnReq rejects each
	// further request as it arrives. 0: no cap.
	MaxUndecided int
	// MaxEstablishing caps the accepted connections whose ESTABLISHED
	// event has not been read yet and which are not closed; past it,
	// NextConnReq rejects each further request as it arrives. 0: no cap.
	MaxEstablishing int
}

// Listen mirrors rpma_ep_listen. Port "0" binds a free port; Addr reports
// it. lp may be nil (librpma's behaviour).
func Listen(p *Peer, addr, port string, lp *ListenParams) (*Endpoint, error) {
	const op = "ep_listen"
	var prm ListenParams
	if lp != nil {
		prm = *lp
	}
	switch {
	case prm.Backlog < 0:
		return nil, rpmaerr.Inval(op, "Backlog %d is negative", prm.Backlog)
	case prm.MaxUndecided < 0:
		return nil, rpmaerr.Inval(op, "MaxUndecided %d is negative", prm.MaxUndecided)
	case prm.MaxEstablishing < 0:
		return nil, rpmaerr.Inval(op, "MaxEstablishing %d is negative", prm.MaxEstablishing)
	}
	if addr == "" {
		return nil, rpmaerr.Inval(op, "empty address")
	}
	if port == "" {
		return nil, rpmaerr.Inval(op, "empty port")
	}
	if err := p.acquire(op); err != nil {
		return nil, err
	}
	e, err := listen(op, p, addr, port, &prm)
	if err != nil {
		p.release()
		return nil, err
	}
	rpma.Logf(rpma.LogNotice, "Waiting for incoming connection on %s:%s", addr, port)
	return e, nil
}

func listen(op string, p *Peer, addr, port string, prm *ListenParams) (*Endpoint, error) {
	ch, err := newCMChannel(op)
	if err != nil {
		return nil, err
	}
	id, err := ibv.CreateID(ch.ch)
	if err != nil {
		ch.destroy()
		return nil, provider(op, err)
	}
	fail := func(err error) (*Endpoint, error) {
		id.Destroy()
		ch.destroy()
		return nil, err
	}
	ai, err := ibv.GetAddrInfo(addr, port, true)
	if err != nil {
		return fail(providerMsg(op, err, "node=%s, service=%s, passive", addr, port))
	}
	err = id.BindAddr(ai)
	ai.Free()
	if err != nil {
		return fail(providerMsg(op, err, "addr=%s, port=%s", addr, port))
	}
	if err := id.Listen(prm.Backlog); err != nil {
		return fail(providerMsg(op, err, "backlog %d", prm.Backlog))
	}
	e := &Endpoint{
		peer:         p,
		ch:           ch,
		id:           id,
		addr:         id.LocalAddr(),
		leak:         leak.Track("ep.Endpoint"),
		undecided:    new(atomic.Int64),
		establishing: new(atomic.Int64),

		maxUndecided:    int64(prm.MaxUndecided),
		maxEstablishing: int64(prm.MaxEstablishing),
	}
	e.open()
	return e, nil
}

// Undecided is ep.Endpoint.Undecided's core; see there.
func (e *Endpoint) Undecided() int {
	if e == nil || e.undecided == nil {
		return 0
	}
	return int(e.undecided.Load())
}

// Establishing is ep.Endpoint.Establishing's core; see there.
func (e *Endpoint) Establishing() int {
	if e == nil || e.establishing == nil {
		return 0
	}
	return int(e.establishing.Load())
}

// Refused is ep.Endpoint.Refused's core; see there.
func (e *Endpoint) Refused() uint64 {
	if e == nil {
		return 0
	}
	return e.refused.Load()
}

// Addr returns the bound address and port (rdma_get_local_addr).
func (e *Endpoint) Addr() netip.AddrPort {
	if e == nil {
		return netip.AddrPort{}
	}
	return e.addr
}

// Port returns the bound port in decimal, ready for NewConnReq.
func (e *Endpoint) Port() string {
	if e == nil || !e.addr.IsValid() {
		return ""
	}
	return strconv.Itoa(int(e.addr.Port()))
}

// FD is ep.Endpoint.FD's core; see there.
func (e *Endpoint) FD() int {
	if e == nil || e.closed() {
		return -1
	}
	return e.ch.fd
}

// NextConnReq is ep.Endpoint.NextConnReq's core (see there); nil params are the defaults.
func (e *Endpoint) NextConnReq(ctx context.Context, params *ConnParams) (*ConnReq, error) {
	const op = "ep_next_conn_req"
	if e == nil {
		return nil, errNil(op, "endpoint")
	}
	if ctx == nil {
		return nil, errNil(op, "context")
	}
	prm, err := ResolveParams(op, params)
	if err != nil {
		return nil, err
	}
	if !e.enter() {
		return nil, errClosed(op, "endpoint")
	}
	defer e.exit()
	if err := prm.checkFor(op, e.peer); err != nil {
		return nil, err // before waiting: the request would be rejected
	}
	for {
		ev, err := e.ch.next(ctx, op, "endpoint")
		if err != nil {
			return nil, err
		}
		if e.refuse(&ev) {
			continue
		}
		return e.request(op, &ev, &prm)
	}
}

// TryNextConnReq is ep.Endpoint.TryNextConnReq's core; see there.
func (e *Endpoint) TryNextConnReq(params *ConnParams) (*ConnReq, error) {
	const op = "ep_next_conn_req"
	if e == nil {
		return nil, errNil(op, "endpoint")
	}
	prm, err := ResolveParams(op, params)
	if err != nil {
		return nil, err
	}
	if !e.enter() {
		return nil, errClosed(op, "endpoint")
	}
	defer e.exit()
	if err := prm.checkFor(op, e.peer); err != nil {
		return nil, err
	}
	for {
		ev, got, err := e.ch.take()
		switch {
		case !got:
			return nil, errNoConnReqYet
		case err != nil:
			return nil, provider(op, err)
		}
		if e.refuse(&ev) {
			continue
		}
		return e.request(op, &ev, &prm)
	}
}

var errNoConnReqYet = rpmaerr.New("ep_next_conn_req", rpma.CodeNoEvent, 0, "no connection request pending")

// refuse rejects and destroys the id of a connection request when
// MaxEstablishing accepted connections are not established or
// MaxUndecided requests are undecided, and reports whether it did; else,
// for a request, it counts one more undecided request, which the request
// built from ev then owns.
func (e *Endpoint) refuse(ev *ibv.CMEvent) bool {
	if ev.Type != ibv.EventConnectRequest {
		return false
	}
	if n := e.establishing.Load(); e.maxEstablishing > 0 && n >= e.maxEstablishing {
		return e.reject(ev, fmt.Sprintf("%d accepted connections are not established", n))
	}
	for {
		n := e.undecided.Load()
		if e.maxUndecided > 0 && n >= e.maxUndecided {
			break
		}
		if e.undecided.CompareAndSwap(n, n+1) {
			return false
		}
	}
	return e.reject(ev, fmt.Sprintf("%d requests are undecided", e.maxUndecided))
}

// reject rejects and destroys the id of a connection request the
// endpoint refuses, for why; it reports true.
func (e *Endpoint) reject(ev *ibv.CMEvent, why string) bool {
	e.refused.Add(1)
	rpma.Logf(rpma.LogNotice, "Rejecting a connection request from %s: %s", ev.ID.PeerAddr(), why)
	if err := ev.ID.Reject(nil); err != nil {
		rpma.Logf(rpma.LogWarning, "ep_next_conn_req: rejecting an excess request: %v", err)
	}
	if err := ev.ID.Destroy(); err != nil {
		rpma.Logf(rpma.LogWarning, "ep_next_conn_req: destroying an excess request: %v", err)
	}
	return true
}

// request builds the incoming request of a CONNECT_REQUEST event, which
// refuse has counted as undecided.
func (e *Endpoint) request(op string, ev *ibv.CMEvent, prm *ConnParams) (*ConnReq, error) {
	if ev.Type != ibv.EventConnectRequest {
		rpma.Logf(rpma.LogError, "Unexpected event received: %s", ev.Type)
		return nil, rpmaerr.Inval(op, "unexpected event %s", ev.Type)
	}
	r, err := newPassive(op, e.peer, ev, prm, e.undecided, e.establishing)
	if err != nil {
		e.undecided.Add(-1)
	}
	return r, err
}

// Close is ep.Endpoint.Shutdown's core; see there.
func (e *Endpoint) Close() error {
	if e == nil || !e.beginClose() {
		return nil
	}
	e.ch.wake()
	e.lock()
	defer e.unlock()
	if err := e.id.Destroy(); err != nil {
		e.closeFailed() // the id stays; a retried Close destroys it
		return provider("ep_shutdown", err)
	}
	e.ch.destroy()
	e.peer.release()
	e.leak.Release()
	return nil
}
