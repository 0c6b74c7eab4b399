package session

import (
	"context"
	"fmt"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// EventError is a connection event other than the one a helper waited
// for: for example [rpma.ConnRejected] from Connect when nobody listens
// at the address, or accepts.
type EventError struct {
	Op    string         // the helper: "connect", "accept", "hangup"
	Event rpma.ConnEvent // what came
	Want  rpma.ConnEvent // what was waited for
}

func (e *EventError) Error() string {
	return fmt.Sprintf("got the event %q, want %q", e.Event, e.Want)
}

// Is reports whether target is rpma.ErrConnBroken and the event ends the
// connection (CLOSED, LOST, REJECTED, UNREACHABLE), as a
// *rpma.ConnEventError does.
func (e *EventError) Is(target error) bool {
	if target != rpma.ErrConnBroken {
		return false
	}
	switch e.Event {
	case rpma.ConnClosed, rpma.ConnLost, rpma.ConnRejected, rpma.ConnUnreachable:
		return true
	}
	return false
}

// Serve is the server's side for a single client: it listens at addr and
// port (ep.Listen), accepts the first connection request offering region m
// and pcfg ([Accept], default connection configuration) and shuts the
// endpoint down: a connection does not need its endpoint. To serve
// several clients, or on port "0", use ep.Listen and Accept.
func Serve(ctx context.Context, p *peer.Peer, addr, port string, m *mr.Local, pcfg peer.Cfg) (c *conn.Conn, err error) {
	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return nil, fmt.Errorf("session: serve: %w", err)
	}
	defer func() {
		if serr := e.Shutdown(); serr != nil && err == nil {
			c.Close()
			c, err = nil, fmt.Errorf("session: serve: %w", serr)
		}
	}()
	return Accept(ctx, e, nil, m, pcfg)
}

// Accept waits for the next connection request on e (ep.Endpoint.NextConnReq,
// with cfg: nil for the defaults), accepts it with the [Offer] of region m
// (nil: no region) and pcfg as private data, and waits for the connection
// to be established. Any other first event is an [*EventError]. On an
// error, the request or connection is closed; m, e and the peer are not.
func Accept(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, m *mr.Local, pcfg peer.Cfg) (*conn.Conn, error) {
	pdata, err := OfferFor(m, pcfg).MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("session: accept: %w", err)
	}
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("session: accept: %w", err)
	}
	return establish(ctx, "accept", req, pdata)
}

// Connect connects to the server at addr and port (conn.NewRequest with
// cfg, nil for the defaults), waits for the connection to be established,
// decodes the [Offer] in the server's private data, applies its peer
// configuration (conn.Conn.ApplyRemotePeerCfg: with DirectWriteToPMem,
// flushes to persistence become possible) and returns the connection and
// the offered region (nil when the server offered none).
//
// A first event other than ESTABLISHED is an [*EventError]: on rxe, no
// listener at the address gives [rpma.ConnRejected]. On any error the
// connection is closed.
//
// The server's data offset ([Offer.DataOffset], where its data starts in
// the region; Accept sends 0, librpma's C examples may not) is not
// applied: decode c.PrivateData() with [Offer.UnmarshalBinary] to read it.
func Connect(ctx context.Context, p *peer.Peer, addr, port string, cfg *conn.Config) (*conn.Conn, *mr.Remote, error) {
	req, err := conn.NewRequest(ctx, p, addr, port, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("session: connect: %w", err)
	}
	c, err := establish(ctx, "connect", req, nil)
	if err != nil {
		return nil, nil, err
	}
	r, err := applyOffer(c)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("session: connect: %w", err)
	}
	return c, r, nil
}

// applyOffer decodes the server's offer on c and applies its peer
// configuration.
func applyOffer(c *conn.Conn) (*mr.Remote, error) {
	var o Offer
	if err := o.UnmarshalBinary(c.PrivateData()); err != nil {
		return nil, err
	}
	r, err := o.Remote()
	if err != nil {
		return nil, err
	}
	pcfg, err := o.PeerCfg()
	if err != nil {
		return nil, err
	}
	if err := c.ApplyRemotePeerCfg(pcfg); err != nil {
		return nil, err
	}
	return r, nil
}

// establish connects or accepts req with pdata and waits for ESTABLISHED.
func establish(ctx context.Context, op string, req *conn.ConnReq, pdata []byte) (*conn.Conn, error) {
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, fmt.Errorf("session: %s: %w", op, err)
	}
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = &EventError{Op: op, Event: ev, Want: rpma.ConnEstablished}
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("session: %s: %w", op, err)
	}
	return c, nil
}

// WaitFor returns the completion of the operation posted with opContext
// on q (signaled: rpma.CompletionAlways), waiting with ctx until it
// comes (cq.CQ.WaitFor). It takes only that completion: the completions
// of other op contexts stay queued for their own callers, so goroutines
// that share a connection may each wait for their own operations, with
// op contexts of their own. A failed completion is returned with an
// error matching rpma.ErrConnBroken and rpma.ErrCompletion (a
// *rpma.WCError). The wait ends with the connection (a
// *rpma.ConnEventError) and with ctx (ctx.Err()).
func WaitFor(ctx context.Context, q *cq.CQ, opContext uint64) (cq.WC, error) {
	wc, err := q.WaitFor(ctx, opContext)
	if err != nil {
		if wc.Status != rpma.WCSuccess {
			return wc, fmt.Errorf("session: op context %d: %w", opContext, err)
		}
		return wc, fmt.Errorf("session: waiting for op context %d: %w", opContext, err)
	}
	return wc, nil
}

// PersistOpContext was the op context WriteAndPersist posted its flush
// with.
//
// Deprecated: WriteAndPersist's completions are its own now
// (conn.Conn.WriteAndFlushWait) and carry no op context of the caller's;
// nothing uses this value.
const PersistOpContext = ^uint64(0) - 1

// WriteAndPersist writes n bytes of src at srcOff to dst at dstOff and
// makes them durable: one write and a flush of type rpma.FlushPersistent,
// posted as one chain, and it waits for that flush's completion
// (conn.Conn.WriteAndFlushWait). When it returns nil the bytes are in
// the other side's persistence domain. It is safe for concurrent use:
// goroutines that share c each return on their own write's completion,
// and a full send queue makes a call wait for room (with ctx).
//
// Persistence is never weakened: when the other side did not declare
// direct write to persistent memory (the peer configuration Connect
// applied) or dst lacks mr.UsageFlushPersistent, it returns an error
// matching rpma.ErrNotSupported before posting anything; use
// conn.Conn.WriteAndFlushWait with rpma.FlushVisibility for memory that
// is not persistent. When ctx ends after the post, the error matches
// ctx.Err() and the write's outcome is unknown.
func WriteAndPersist(ctx context.Context, c *conn.Conn, dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int) error {
	if err := c.WriteAndFlushWait(ctx, dst, dstOff, src, srcOff, n, rpma.FlushPersistent); err != nil {
		return fmt.Errorf("session: write and persist: %w", err)
	}
	return nil
}

// Hangup ends the connection from this side: Disconnect, then wait for
// the CLOSED event (LOST ends it too). It returns when both sides are
// disconnected, or with ctx's error. Operations still outstanding are
// flushed by the Disconnect (see conn.Conn.Disconnect); Close c after it.
func Hangup(ctx context.Context, c *conn.Conn) error {
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("session: hangup: %w", err)
	}
	return waitClosed(ctx, "hangup", c)
}

// WaitForHangup is the other side of Hangup, for the side that waits for
// its peer to finish (a server whose client writes with one-sided
// operations): it waits for CLOSED (or LOST), then disconnects. Close c
// after it.
func WaitForHangup(ctx context.Context, c *conn.Conn) error {
	if err := waitClosed(ctx, "wait for hangup", c); err != nil {
		return err
	}
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("session: wait for hangup: %w", err)
	}
	return nil
}

// waitClosed waits for CLOSED or LOST; any other event is an
// *EventError.
func waitClosed(ctx context.Context, op string, c *conn.Conn) error {
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("session: %s: %w", op, err)
	}
	if ev != rpma.ConnClosed && ev != rpma.ConnLost {
		return fmt.Errorf("session: %s: %w", op, &EventError{Op: op, Event: ev, Want: rpma.ConnClosed})
	}
	return nil
}
