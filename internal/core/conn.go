package core

import (
	"context"
	"net/netip"
	"sync/atomic"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Conn mirrors struct rpma_conn: a connected (or connecting) CM id with its
// own event channel, its queue pair and CQs.
type Conn struct {
	life
	dl      *dataLock // the data path's (posts take it instead of life's)
	peer    *Peer
	ev      *connEvents
	id      *ibv.CMID
	q       queues
	passive bool

	// Copies of what the queues hold, for the getters: they stay valid
	// (and race-free) after Close clears q.
	cq, rcq           *CQ
	srq               *SRQ
	state             *qpState
	qpNum             uint32
	nativeAtomicWrite bool
	nativeFlush       bool

	directWriteToPMem atomic.Bool
	live              liveness       // with a PeerTimeout
	estab             establishWatch // an accepted connection's, until established (establish.go)
	grants            grantSet       // the other side's access to local regions (grant.go)
	leak              *leak.Handle
}

// EventFD is conn.Conn.EventFD's core; see there.
func (c *Conn) EventFD() int {
	if c == nil || c.closed() {
		return -1
	}
	return c.ev.userFD
}

// CompFD is conn.Conn.CompFD's core; see there.
func (c *Conn) CompFD() (int, error) {
	const op = "conn_get_compl_fd"
	if c == nil {
		return -1, errNil(op, "connection")
	}
	if !c.enter() {
		return -1, errClosed(op, "connection")
	}
	defer c.exit()
	if c.q.shared == nil {
		return -1, rpmaerr.New(op, rpma.CodeNotSharedChnl, 0, "")
	}
	return c.q.shared.ch.FD(), nil
}

// mapEvent is librpma's mapping of rdma_cm events (rpma_conn_next_event).
func mapEvent(t ibv.CMEventType) (rpma.ConnEvent, bool) {
	switch t {
	case ibv.EventEstablished:
		return rpma.ConnEstablished, true
	case ibv.EventConnectError, ibv.EventDeviceRemoval:
		return rpma.ConnLost, true
	case ibv.EventDisconnected, ibv.EventTimewaitExit:
		return rpma.ConnClosed, true
	case ibv.EventRejected:
		return rpma.ConnRejected, true
	case ibv.EventUnreachable:
		return rpma.ConnUnreachable, true
	}
	return rpma.ConnUndefined, false
}

// NextEvent is conn.Conn.NextEvent's core (see there): an exclusive wait.
func (c *Conn) NextEvent(ctx context.Context) (rpma.ConnEvent, error) {
	const op = "conn_next_event"
	if c == nil {
		return rpma.ConnUndefined, errNil(op, "connection")
	}
	if ctx == nil {
		return rpma.ConnUndefined, errNil(op, "context")
	}
	if !c.enter() {
		return rpma.ConnUndefined, errClosed(op, "connection")
	}
	defer c.exit()
	ev, err := c.ev.next(ctx, op, "connection")
	if err != nil {
		return rpma.ConnUndefined, err
	}
	return reportEvent(op, ev)
}

// TryNextEvent is conn.Conn.TryNextEvent's core; see there.
func (c *Conn) TryNextEvent() (rpma.ConnEvent, error) {
	const op = "conn_next_event"
	if c == nil {
		return rpma.ConnUndefined, errNil(op, "connection")
	}
	if !c.enter() {
		return rpma.ConnUndefined, errClosed(op, "connection")
	}
	defer c.exit()
	ev, got, err := c.ev.take()
	switch {
	case !got:
		return rpma.ConnUndefined, errNoEventYet
	case err != nil:
		return rpma.ConnUndefined, provider(op, err)
	}
	return reportEvent(op, ev)
}

var errNoEventYet = rpmaerr.New("conn_next_event", rpma.CodeNoEvent, 0, "no event pending")

// reportEvent maps an rdma_cm event to the connection event NextEvent
// returns, logging it as librpma does.
func reportEvent(op string, ev ibv.CMEvent) (rpma.ConnEvent, error) {
	e, ok := mapEvent(ev.Type)
	if !ok {
		rpma.Logf(rpma.LogWarning, "%s: %s", rpma.ConnUndefined, ev.Type)
		return rpma.ConnUndefined, rpmaerr.New(op, rpma.CodeUnknown, 0, "unexpected rdma_cm event %s", ev.Type)
	}
	rpma.Logf(rpma.LogNotice, "%s", e)
	return e, nil
}

// PrivateData is conn.Conn.PrivateData's core; see there.
func (c *Conn) PrivateData() []byte {
	if c == nil {
		return nil
	}
	return c.ev.privateData()
}

// QPNum mirrors rpma_conn_get_qp_num.
func (c *Conn) QPNum() uint32 {
	if c == nil {
		return 0
	}
	return c.qpNum
}

// CQ mirrors rpma_conn_get_cq.
func (c *Conn) CQ() *CQ {
	if c == nil {
		return nil
	}
	return c.cq
}

// RCQ mirrors rpma_conn_get_rcq: nil when the connection has no receive CQ.
func (c *Conn) RCQ() *CQ {
	if c == nil || c.rcq == nil {
		return nil
	}
	return c.rcq
}

// IsPassive reports whether c was accepted (rather than connected).
func (c *Conn) IsPassive() bool { return c != nil && c.passive }

// LocalAddr and PeerAddr return the two ends' addresses.
func (c *Conn) LocalAddr() netip.AddrPort {
	if c == nil || !c.enter() {
		return netip.AddrPort{}
	}
	defer c.exit()
	return c.id.LocalAddr()
}

// PeerAddr returns the other side's address.
func (c *Conn) PeerAddr() netip.AddrPort {
	if c == nil || !c.enter() {
		return netip.AddrPort{}
	}
	defer c.exit()
	return c.id.PeerAddr()
}

// ApplyRemotePeerCfg mirrors rpma_conn_apply_remote_peer_cfg.
func (c *Conn) ApplyRemotePeerCfg(directWriteToPMem bool) error {
	const op = "conn_apply_remote_peer_cfg"
	if c == nil {
		return errNil(op, "connection")
	}
	if c.closed() {
		return errClosed(op, "connection")
	}
	c.directWriteToPMem.Store(directWriteToPMem)
	return nil
}

// DirectWriteToPMem reports what ApplyRemotePeerCfg applied (false by
// default).
func (c *Conn) DirectWriteToPMem() bool { return c != nil && c.directWriteToPMem.Load() }

// Disconnect is conn.Conn.Disconnect's core; see there.
func (c *Conn) Disconnect() error {
	const op = "conn_disconnect"
	if c == nil {
		return errNil(op, "connection")
	}
	if !c.enter() {
		return errClosed(op, "connection")
	}
	defer c.exit()
	if err := c.id.Disconnect(); err != nil {
		return provider(op, err)
	}
	rpma.Logf(rpma.LogNotice, "Requesting for disconnection")
	return nil
}

// Close is conn.Conn.Close's core; see there.
func (c *Conn) Close() error {
	if c == nil || !c.beginClose() {
		return nil
	}
	c.stopLiveness()
	c.stopEstablishWatch()
	c.ev.wake()
	c.q.shared.wake()
	// Wake completion waits too: GetSendComp and GetRecvComp wait on a
	// CQ while inside the connection.
	c.q.cq.wake()
	c.q.rcq.wake()
	c.lock()
	defer c.unlock()
	// The windows before the QP (a bound window holds it), the queues
	// before the id.
	err := c.grants.revokeAll()
	if err == nil {
		err = c.q.destroy(c.id)
	}
	if err == nil {
		err = provider("conn_delete", c.id.Destroy())
	}
	if err != nil {
		c.closeFailed() // what is left is destroyed by a retried Close
		return err
	}
	c.ev.destroy()
	c.peer.release()
	c.leak.Release()
	return nil
}
