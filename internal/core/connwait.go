package core

import (
	"context"

	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// The connection's completion waits and getters.

// Wait is conn.Conn.Wait's core (see there): a broadcast wait, as CQ.Wait.
func (c *Conn) Wait(ctx context.Context) (*CQ, bool, error) {
	const op = "conn_wait"
	if c == nil {
		return nil, false, errNil(op, "connection")
	}
	if ctx == nil {
		return nil, false, errNil(op, "context")
	}
	if !c.enter() {
		return nil, false, errClosed(op, "connection")
	}
	defer c.exit()
	if c.q.shared == nil {
		return nil, false, errNotShared
	}
	q, err := c.q.shared.wait(ctx, op)
	rq, isRCQ, err := c.cqResult(q, err)
	if rq != nil {
		rq.stats.waited(err)
	} else {
		c.cq.stats.waited(err) // ended without a CQ: counted on the main one
	}
	return rq, isRCQ, err
}

// TryWait is conn.Conn.TryWait's core; see there.
func (c *Conn) TryWait() (*CQ, bool, error) {
	const op = "conn_wait"
	if c == nil {
		return nil, false, errNil(op, "connection")
	}
	if !c.enter() {
		return nil, false, errClosed(op, "connection")
	}
	defer c.exit()
	s := c.q.shared
	if s == nil {
		return nil, false, errNotShared
	}
	if !s.w.tryTurn() {
		if q := s.pending(); q != nil {
			return c.cqResult(q, nil)
		}
		return nil, false, errNoSharedCompletionYet
	}
	q, done, err := s.tryOnce(op)
	s.w.release()
	if !done {
		return nil, false, errNoSharedCompletionYet
	}
	return c.cqResult(q, err)
}

var (
	errNotShared             = rpmaerr.New("conn_wait", rpma.CodeNotSharedChnl, 0, "use cq.CQ.Wait")
	errNoSharedCompletionYet = rpmaerr.New("conn_wait", rpma.CodeNoCompletion, 0, "no completion event pending")
)

func (c *Conn) cqResult(q *CQ, err error) (*CQ, bool, error) {
	if err != nil {
		return nil, false, err
	}
	return q, q == c.q.rcq, nil
}

// NativeAtomicWrite is conn.Conn.NativeAtomicWrite's core; see there.
func (c *Conn) NativeAtomicWrite() bool { return c != nil && c.nativeAtomicWrite }

// NativeFlush is conn.Conn.NativeFlush's core; see there.
func (c *Conn) NativeFlush() bool { return c != nil && c.nativeFlush }

// SRQ is conn.Conn.SRQ's core; see there.
func (c *Conn) SRQ() *SRQ {
	if c == nil {
		return nil
	}
	return c.srq
}

// Broken is conn.Conn.Broken's core; see there.
func (c *Conn) Broken() error {
	const op = "conn_broken"
	switch {
	case c == nil:
		return errNil(op, "connection")
	case c.closed():
		return errClosed(op, "connection")
	}
	return c.state.err()
}

// GetComp is GetSendComp (recv false) and GetRecvComp (recv true), as
// librdmacm's rdma_get_send_comp and rdma_get_recv_comp: it returns
// exactly one completion of the connection's CQ (send) or receive CQ,
// polling first, else waiting (re-armed, then polled again), so that no
// completion is missed and spurious wake-ups are absorbed.
func (c *Conn) GetComp(ctx context.Context, recv bool) (WC, error) {
	op := "get_send_comp"
	if recv {
		op = "get_recv_comp"
	}
	if c == nil {
		return WC{}, errNil(op, "connection")
	}
	if ctx == nil {
		return WC{}, errNil(op, "context")
	}
	if !c.enter() {
		return WC{}, errClosed(op, "connection")
	}
	defer c.exit()
	srqRCQ := c.srq != nil && c.srq.rcq != nil
	q := c.cq
	switch {
	case recv && c.rcq == nil:
		return WC{}, rpmaerr.Inval(op, "the connection has no receive CQ of its own (Config.RCQSize is 0): receive and send completions share the CQ")
	case recv && srqRCQ:
		return WC{}, rpmaerr.Inval(op, "the connection's receives complete on its SRQ's receive CQ")
	case !recv && c.rcq == nil && !srqRCQ:
		return WC{}, rpmaerr.Inval(op, "send and receive completions share the CQ (Config.RCQSize is 0): separate CQs are needed")
	case recv:
		q = c.rcq
	}
	var wc [1]WC
	for {
		n, err := q.GetWC(wc[:])
		if n == 1 {
			return wc[0], wc[0].Err()
		}
		if err != rpma.ErrNoCompletion {
			return WC{}, err
		}
		if c.q.shared != nil {
			_, err = c.q.shared.wait(ctx, op)
		} else {
			err = q.wait(ctx, op)
		}
		if err != nil {
			return WC{}, err
		}
	}
}
