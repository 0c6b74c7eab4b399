package core

import (
	"context"
	"net/netip"
	"strconv"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
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
}

// Listen mirrors rpma_ep_listen. Port "0" binds a free port; Addr reports
// it.
func Listen(p *Peer, addr, port string) (*Endpoint, error) {
	const op = "ep_listen"
	if addr == "" {
		return nil, rpma.Inval(op, "empty address")
	}
	if port == "" {
		return nil, rpma.Inval(op, "empty port")
	}
	if err := p.acquire(op); err != nil {
		return nil, err
	}
	e, err := listen(op, p, addr, port)
	if err != nil {
		p.release()
		return nil, err
	}
	rpma.Logf(rpma.LogNotice, "Waiting for incoming connection on %s:%s", addr, port)
	return e, nil
}

func listen(op string, p *Peer, addr, port string) (*Endpoint, error) {
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
	if err := id.Listen(0); err != nil {
		return fail(provider(op, err))
	}
	e := &Endpoint{
		peer: p,
		ch:   ch,
		id:   id,
		addr: id.LocalAddr(),
		leak: leak.Track("ep.Endpoint"),
	}
	e.open()
	return e, nil
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

// FD mirrors rpma_ep_get_fd: the event channel's fd, or -1 when e is nil or
// closed.
func (e *Endpoint) FD() int {
	if e == nil || e.closed() {
		return -1
	}
	return e.ch.fd
}

// NextConnReq mirrors rpma_ep_next_conn_req: it waits for the next
// connection request and builds the request's queues with params (nil:
// defaults). An event other than CONNECT_REQUEST is consumed and reported
// as an invalid argument, as in librpma. It is an exclusive wait:
// concurrent calls each get a different request.
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
	ev, err := e.ch.next(ctx, op, "endpoint")
	if err != nil {
		return nil, err
	}
	return e.request(op, &ev, &prm)
}

// TryNextConnReq is NextConnReq that does not block: with no request
// pending, it returns an error matching rpma.ErrNoEvent
// (rpma_ep_next_conn_req on a non-blocking fd).
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
	ev, got, err := e.ch.take()
	switch {
	case !got:
		return nil, errNoConnReqYet
	case err != nil:
		return nil, provider(op, err)
	}
	return e.request(op, &ev, &prm)
}

var errNoConnReqYet = rpma.NewError("ep_next_conn_req", rpma.CodeNoEvent, 0, "no connection request pending")

// request builds the incoming request of a CONNECT_REQUEST event.
func (e *Endpoint) request(op string, ev *ibv.CMEvent, prm *ConnParams) (*ConnReq, error) {
	if ev.Type != ibv.EventConnectRequest {
		rpma.Logf(rpma.LogError, "Unexpected event received: %s", ev.Type)
		return nil, rpma.Inval(op, "unexpected event %s", ev.Type)
	}
	return newPassive(op, e.peer, ev, prm)
}

// Close mirrors rpma_ep_shutdown: it destroys the listening id and the
// event channel. Connections and requests that came from the endpoint
// live on their own channels and survive it. A goroutine blocked in
// NextConnReq returns an error matching os.ErrClosed. Close is idempotent
// and nil-safe.
func (e *Endpoint) Close() error {
	if e == nil || !e.beginClose() {
		return nil
	}
	e.ch.wake()
	e.lock()
	defer e.unlock()
	err := provider("ep_shutdown", e.id.Destroy())
	e.ch.destroy()
	e.peer.release()
	e.leak.Release()
	return err
}
