package ep

import (
	"context"
	"net/netip"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/peer"
)

// Endpoint mirrors struct rpma_ep: a listening rdma_cm id on its own event
// channel.
//
// An Endpoint is meant for one goroutine at a time; Close (or Shutdown)
// may be called from any goroutine at any time and makes a concurrent
// NextConnReq return an error matching os.ErrClosed. FD, Addr and Port are
// safe for concurrent use.
type Endpoint core.Endpoint

func (e *Endpoint) core() *core.Endpoint { return (*core.Endpoint)(e) }

// Listen mirrors rpma_ep_listen: it creates an event channel and a CM id,
// binds it to addr and port (rdma_getaddrinfo with RAI_PASSIVE, then
// rdma_bind_addr) and listens (rdma_listen). addr is an IPv4 or IPv6
// address or a host name; port "0" binds a free port, which [Endpoint.Addr]
// and [Endpoint.Port] report.
//
// Errors: a nil or closed p, an empty addr or port match
// [rpma.ErrInvalidArgument]; a failing rdma_cm call matches
// [rpma.ErrProvider] and its errno (for example EADDRINUSE).
func Listen(p *peer.Peer, addr, port string) (*Endpoint, error) {
	return (*Config)(nil).Listen(p, addr, port)
}

// Config holds an endpoint's settings beyond librpma's, in the manner of
// net.ListenConfig; its zero value (and a nil *Config) is librpma's
// behaviour.
type Config struct {
	// Backlog is rdma_listen's backlog: how many connection requests the
	// kernel queues for the endpoint until NextConnReq takes them. 0 (what
	// librpma passes) is the kernel's maximum, net.rdma_ucm.max_backlog
	// (1024 by default). A request arriving at a full backlog is not
	// rejected: the kernel drops it, and the client's rdma_cm retries it
	// until it times out (UNREACHABLE, after seconds to minutes).
	Backlog int
	// MaxUndecided caps the undecided requests: those NextConnReq (or
	// TryNextConnReq) returned that are neither connected nor closed. With
	// MaxUndecided requests undecided, NextConnReq rejects each further
	// request at once (rdma_reject without private data: the client's
	// connection sees REJECTED, as for [conn.ConnReq.Reject]) and goes on
	// waiting, so a flood of requests costs the server no more than
	// MaxUndecided requests' resources. 0: no cap (librpma's behaviour).
	MaxUndecided int
	// MaxEstablishing caps the accepted connections that are not
	// established yet: those accepted (conn.ConnReq.Connect) from the
	// endpoint's requests whose ESTABLISHED event has not been read (by
	// NextEvent, a completion wait or the library's own watch) and that
	// are not closed. With MaxEstablishing of them, NextConnReq rejects
	// each further request at once, as for MaxUndecided (and counts it in
	// Refused). Clients that connect and never complete the handshake
	// thus hold at most MaxEstablishing connections, each until its
	// conn.Config.EstablishTimeout ends it and the server closes it. 0:
	// no cap (librpma's behaviour).
	MaxEstablishing int
}

// Listen is [Listen] with c's settings. Errors: a negative Backlog,
// MaxUndecided or MaxEstablishing matches [rpma.ErrInvalidArgument], besides Listen's.
func (c *Config) Listen(p *peer.Peer, addr, port string) (*Endpoint, error) {
	// A conversion, not a copy: the compiler checks that Config and
	// core.ListenParams keep the same fields (nil stays nil).
	e, err := core.Listen((*core.Peer)(p), addr, port, (*core.ListenParams)(c))
	return (*Endpoint)(e), err
}

// Undecided returns how many requests NextConnReq and TryNextConnReq
// returned that are neither connected nor closed yet.
func (e *Endpoint) Undecided() int { return e.core().Undecided() }

// Establishing returns how many connections accepted from the endpoint's
// requests are neither established (their ESTABLISHED event read) nor
// closed: those [Config.MaxEstablishing] caps.
func (e *Endpoint) Establishing() int { return e.core().Establishing() }

// Refused returns how many requests the endpoint rejected because
// [Config.MaxUndecided] requests were undecided or
// [Config.MaxEstablishing] accepted connections were not established.
func (e *Endpoint) Refused() uint64 { return e.core().Refused() }

// Addr returns the address and port the endpoint is bound to, read back
// with rdma_get_local_addr.
func (e *Endpoint) Addr() netip.AddrPort { return e.core().Addr() }

// Port returns the bound port in decimal, ready for conn.NewRequest.
func (e *Endpoint) Port() string { return e.core().Port() }

// FD mirrors rpma_ep_get_fd: the fd of the endpoint's event channel,
// non-blocking; -1 when e is nil or closed.
func (e *Endpoint) FD() int { return e.core().FD() }

// NextConnReq mirrors rpma_ep_next_conn_req: it waits for the next
// connection request, which will have CQs and a QP made with cfg (nil:
// defaults). The request is moved to its own event channel at once
// (rdma_migrate_id), so it and its connection survive the endpoint's
// Close. Unlike librpma, the request creates its CQs, QP and flush buffer
// only when it is accepted (Connect) or a receive is posted on it (Recv),
// so an undecided request holds only its CM id and event channel; with
// [Config.MaxUndecided] requests undecided, further requests are rejected
// as they arrive.
//
// The wait parks the goroutine in Go's runtime poller; when ctx is
// cancelled or its deadline passes, NextConnReq returns ctx.Err()
// promptly, whatever other goroutines wait for. Several goroutines may
// call NextConnReq at once: each request goes to exactly one of them. For
// epoll users, [Endpoint.FD] is the channel's fd, and
// [Endpoint.TryNextConnReq] never blocks.
//
// Errors: an invalid cfg (checked before waiting), or an event other than a
// connection request (consumed, as in librpma), match
// [rpma.ErrInvalidArgument]; a failure to build the request matches
// [rpma.ErrProvider], and the request is then rejected. A failure to
// create its queues is reported by Connect (which rejects the request) or
// Recv.
func (e *Endpoint) NextConnReq(ctx context.Context, cfg *conn.Config) (*conn.ConnReq, error) {
	r, err := e.core().NextConnReq(ctx, params(cfg))
	return (*conn.ConnReq)(r), err
}

// TryNextConnReq is NextConnReq that does not block, for event loops
// (rpma_ep_next_conn_req on a non-blocking fd): with no request pending it
// returns an error matching [rpma.ErrNoEvent].
func (e *Endpoint) TryNextConnReq(cfg *conn.Config) (*conn.ConnReq, error) {
	r, err := e.core().TryNextConnReq(params(cfg))
	return (*conn.ConnReq)(r), err
}

// Shutdown mirrors rpma_ep_shutdown: it destroys the listening CM id and the
// event channel. Connection requests and connections that came from the
// endpoint live on their own channels and survive it. A goroutine blocked
// in NextConnReq returns an error matching os.ErrClosed. Shutdown is
// idempotent and nil-safe.
func (e *Endpoint) Shutdown() error { return e.core().Close() }

// Close is Shutdown.
func (e *Endpoint) Close() error { return e.core().Close() }

// params is the core view of c (nil stays nil), field for field, as
// conn.Config's own: TestParams checks that none is forgotten or copied
// into another field.
func params(c *conn.Config) *core.ConnParams {
	if c == nil {
		return nil
	}
	return &core.ConnParams{
		Timeout:           c.Timeout,
		CQSize:            c.CQSize,
		RCQSize:           c.RCQSize,
		SQSize:            c.SQSize,
		RQSize:            c.RQSize,
		SharedCompChannel: c.SharedCompChannel,
		RetryCount:        c.RetryCount,
		RNRRetryCount:     c.RNRRetryCount,
		PeerTimeout:       c.PeerTimeout,
		AckTimeout:        c.AckTimeout,
		EstablishTimeout:  c.EstablishTimeout,
		WaitMode:          core.WaitMode(c.WaitMode),
		SpinLimit:         c.SpinLimit,
		SRQ:               (*core.SRQ)(c.SRQ),
	}
}
