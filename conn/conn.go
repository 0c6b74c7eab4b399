package conn

import (
	"context"
	"net/netip"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// ConnReq mirrors struct rpma_conn_req: a connection request with its queue
// pair and completion queues already created, not yet connected. An
// outgoing request comes from [NewRequest]; an incoming one from
// ep.Endpoint.NextConnReq. Either way it has its own event channel, which
// its connection inherits.
//
// Every method of a ConnReq is safe for concurrent use. Connect consumes
// it: a second Connect, concurrent or later, returns an error matching
// os.ErrClosed, as does every other method except the getters; Close may
// be called from any goroutine at any time.
type ConnReq core.ConnReq

func (r *ConnReq) core() *core.ConnReq { return (*core.ConnReq)(r) }

// NewRequest mirrors rpma_conn_req_new: it translates addr and port
// (rdma_getaddrinfo), resolves the address and the route, each within
// cfg.Timeout, and creates the CQs and the QP with cfg (nil: defaults).
// The resolution waits in Go's runtime poller; cancelling ctx ends it at
// once with ctx.Err().
//
// Errors: a nil or closed p, an empty addr or port, or a cfg out of range
// match [rpma.ErrInvalidArgument]; an address that cannot be translated or
// resolved matches [rpma.ErrProvider] and the errno of the failing call
// (for example ENETUNREACH, or ETIMEDOUT after cfg.Timeout).
func NewRequest(ctx context.Context, p *peer.Peer, addr, port string, cfg *Config) (*ConnReq, error) {
	r, err := core.NewConnReq(ctx, (*core.Peer)(p), addr, port, cfg.params())
	return (*ConnReq)(r), err
}

// PrivateData mirrors rpma_conn_req_get_private_data: a copy of the private
// data of an incoming request, nil for an outgoing one. rdma_cm pads it: a
// request carries [MaxConnectPrivateData] bytes however few were sent, so
// compare the prefix you expect.
func (r *ConnReq) PrivateData() []byte { return r.core().PrivateData() }

// PeerAddr returns the address of the other side.
func (r *ConnReq) PeerAddr() netip.AddrPort { return r.core().PeerAddr() }

// Connect mirrors rpma_conn_req_connect: it connects an outgoing request
// (rdma_connect) or accepts an incoming one (rdma_accept), sending pdata as
// private data (nil or empty: none), and returns the connection. It does
// not wait: the connection's first event, from [Conn.NextEvent], says
// whether it got established.
//
// Argument errors leave r as it was: a nil or closed r (as in librpma),
// and pdata longer than [MaxConnectPrivateData] (connecting) or
// [MaxAcceptPrivateData] (accepting), which this package checks first and
// librpma does not (it passes the data on, rdma_cm refuses it, and the
// request is consumed), give an error matching [rpma.ErrInvalidArgument]
// before anything is posted. Past those checks
// Connect consumes r whatever the outcome: a failed connect or accept is
// cleaned up (an incoming request is rejected), and r.Close becomes a
// no-op.
func (r *ConnReq) Connect(pdata []byte) (*Conn, error) {
	c, err := r.core().Connect(pdata)
	return (*Conn)(c), err
}

// Close mirrors rpma_conn_req_delete: it rejects an incoming request
// (rdma_reject, so the other side sees [rpma.ConnRejected]) or abandons an
// outgoing one, and destroys its QP, CQs, CM id and event channel. It is
// idempotent, nil-safe and a no-op after Connect.
func (r *ConnReq) Close() error { return r.core().Close() }

// Reject is Close, named for an incoming request: the other side sees
// [rpma.ConnRejected].
func (r *ConnReq) Reject() error { return r.core().Close() }

// Conn mirrors struct rpma_conn: a connection, from the moment its request
// was connected or accepted.
//
// Concurrency (see the package documentation): every method is safe for
// concurrent use. The data-path calls may run while other goroutines wait
// for and poll completions; concurrent NextEvent calls each get a
// different event; Close (which makes concurrent waits return an error
// matching os.ErrClosed), Disconnect and the getters may be called from
// any goroutine at any time.
type Conn core.Conn

func (c *Conn) core() *core.Conn { return (*core.Conn)(c) }

// NextEvent mirrors rpma_conn_next_event: it waits for the connection's
// next event. The rdma_cm events map as in librpma: ESTABLISHED to
// [rpma.ConnEstablished]; DISCONNECTED and TIMEWAIT_EXIT to
// [rpma.ConnClosed]; CONNECT_ERROR and DEVICE_REMOVAL to [rpma.ConnLost];
// REJECTED to [rpma.ConnRejected]; UNREACHABLE to [rpma.ConnUnreachable].
// Any other event is consumed and reported as an error matching
// [rpma.ErrUnknown]. On the connecting side, the private data of the
// ESTABLISHED event (the accepting side's) becomes [Conn.PrivateData].
//
// The wait parks the goroutine in Go's runtime poller (no OS thread is
// blocked); when ctx is cancelled or its deadline passes, NextEvent returns
// ctx.Err() promptly, whatever other goroutines wait for. A ctx that is
// already done returns ctx.Err() without reading an event. Several
// goroutines may call NextEvent at once: each event goes to exactly one of
// them. For epoll users, [Conn.EventFD] is readable whenever NextEvent
// would return at once, and [Conn.TryNextEvent] never blocks.
//
// The usual sequences: connecting side: Connect, ESTABLISHED, Disconnect,
// CLOSED, Close; accepting side: Connect, ESTABLISHED, CLOSED (the other
// side disconnected), Disconnect, Close. The accepting side can get CLOSED
// without ESTABLISHED when the connecting side hangs up right after it
// connected: it learns of ESTABLISHED from the peer's RTU message, which
// the kernel's connection manager may handle after the peer's DREQ (seen
// on rxe with librpma on both sides, too). Such a connection was
// established and is over: treat it as one that closed.
func (c *Conn) NextEvent(ctx context.Context) (rpma.ConnEvent, error) {
	return c.core().NextEvent(ctx)
}

// TryNextEvent is NextEvent that does not block, for event loops
// (rpma_conn_next_event on a non-blocking fd): with no event pending it
// returns an error matching [rpma.ErrNoEvent].
func (c *Conn) TryNextEvent() (rpma.ConnEvent, error) { return c.core().TryNextEvent() }

// Disconnect mirrors rpma_conn_disconnect (rdma_disconnect): it starts a
// disconnection, or completes one the other side started. Both sides then
// get [rpma.ConnClosed]. It does not wait for the other side, and may be
// called while another goroutine waits in NextEvent.
//
// Disconnect moves this side's QP to the error state, and that is when
// operations still outstanding come back: every posted request that has
// not completed (for example a write or send to a peer that vanished, or
// a send the other side never posted a receive for) then completes with
// a flush error (its cq.WC.Err matches [rpma.ErrWRFlushed]), with its op
// context, for GetWC to return. Until then nothing makes them complete:
// neither the other side's disconnect (this side reads CLOSED) nor a
// peer that is gone (unless [Config.PeerTimeout] is set: a connection
// lost for it has its QP moved to the error state by the library, which
// flushes them the same way). Close destroys the QP and CQs with
// whatever is still in them, so to learn the fate of every operation,
// Disconnect, drain GetWC, then Close. After a failed completion the QP is already in
// the error state and the rest are flushed without Disconnect (see
// "Broken connections" in the package documentation).
func (c *Conn) Disconnect() error { return c.core().Disconnect() }

// Close mirrors rpma_conn_delete: it destroys the QP, the CQs, the CM id
// (which disconnects a connection still up) and the event channel. Close
// is idempotent and nil-safe. When a destroy fails, Close returns its
// error (matching rpma.ErrProvider, naming the call and its errno) and
// the connection keeps what it could not destroy: it refuses every
// operation, and calling Close again finishes the teardown. A goroutine
// blocked in NextEvent returns an error matching os.ErrClosed.
func (c *Conn) Close() error { return c.core().Close() }

// PrivateData mirrors rpma_conn_get_private_data: a copy of the other
// side's private data, nil if none. On the accepting side it is the
// request's (padded to [MaxConnectPrivateData] bytes by rdma_cm); on the
// connecting side it is the accept's (padded to [MaxAcceptPrivateData]
// bytes), available once NextEvent has returned [rpma.ConnEstablished].
func (c *Conn) PrivateData() []byte { return c.core().PrivateData() }

// QPNum mirrors rpma_conn_get_qp_num: the number of the connection's queue
// pair.
func (c *Conn) QPNum() uint32 { return c.core().QPNum() }

// ApplyRemotePeerCfg mirrors rpma_conn_apply_remote_peer_cfg: it records
// what the other side declared about its platform. Only
// cfg.DirectWriteToPMem matters: it allows flushes of type
// rpma.FlushPersistent (see Conn.Flush).
func (c *Conn) ApplyRemotePeerCfg(cfg peer.Cfg) error {
	return c.core().ApplyRemotePeerCfg(cfg.DirectWriteToPMem)
}

// EventFD mirrors rpma_conn_get_event_fd: an fd for epoll, readable
// whenever [Conn.NextEvent] would return at once (then call
// [Conn.TryNextEvent]); -1 when c is nil or closed. Unlike librpma's, it
// is not the rdma_cm channel's own fd but an epoll instance of the
// library's that watches that channel and the events completion waits
// have already read from it (they watch the channel too, to end when the
// connection does): so it tells the truth whoever read the event. It
// belongs to the connection: do not close it; Close does.
func (c *Conn) EventFD() int { return c.core().EventFD() }

// CQ mirrors rpma_conn_get_cq: the connection's main CQ.
func (c *Conn) CQ() *cq.CQ { return (*cq.CQ)(c.core().CQ()) }

// RCQ mirrors rpma_conn_get_rcq: the connection's receive CQ, nil when
// Config.RCQSize was 0 (or NoQueue).
func (c *Conn) RCQ() *cq.CQ { return (*cq.CQ)(c.core().RCQ()) }

// LocalAddr returns this side's address and port.
func (c *Conn) LocalAddr() netip.AddrPort { return c.core().LocalAddr() }

// PeerAddr returns the other side's address and port.
func (c *Conn) PeerAddr() netip.AddrPort { return c.core().PeerAddr() }
