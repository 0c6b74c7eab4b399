package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gorpma/rpma/rpma"
)

// recvTag marks the op context of the client's receives.
const recvTag = 1 << 32

// event drives w's lanes, each in a goroutine of its own, with the
// per-operation waiting calls: each returns on its own completion.
func (m *measurement) event(ctx context.Context, w *worker) error {
	errs := make([]error, len(w.states))
	var wg sync.WaitGroup
	for i, st := range w.states {
		wg.Go(func() { errs[i] = m.lane(ctx, w, st) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *measurement) lane(ctx context.Context, w *worker, st *opState) error {
	for m.more(st) {
		t0 := time.Now()
		if err := m.waitOne(ctx, w.cc, st); err != nil {
			return err
		}
		now := time.Now()
		st.lat = append(st.lat, int64(now.Sub(t0)))
		st.ops++
		m.progress(w, now)
	}
	return nil
}

// waitOne does one operation of lane st and waits for its completion.
func (m *measurement) waitOne(ctx context.Context, cc *clientConn, st *opState) error {
	c, l, n, lay := cc.c, st.lane, m.size, cc.lay
	switch m.op {
	case opWrite:
		return named("conn.Conn.WriteWait", c.WriteWait(ctx, cc.remote, lay.second(l), cc.local, lay.first(l), n))
	case opRead:
		return named("conn.Conn.ReadWait", c.ReadWait(ctx, cc.local, lay.second(l), cc.remote, lay.first(l), n))
	case opFlushPersistent, opFlushVisibility:
		return named("conn.Conn.FlushWait", c.FlushWait(ctx, cc.remote, lay.second(l), n, m.op.flushType()))
	case opWriteFlushPersistent, opWriteFlushVisibility:
		return named("conn.Conn.WriteAndFlushWait",
			c.WriteAndFlushWait(ctx, cc.remote, lay.second(l), cc.local, lay.first(l), n, m.op.flushType()))
	case opAtomicWrite:
		return named("conn.Conn.AtomicWriteWait", c.AtomicWriteWait(ctx, cc.remote, lay.word(l), st.nextWord()))
	case opSend:
		return m.pingPong(ctx, cc, st)
	case opCAS:
		old, err := c.CompareAndSwapWait(ctx, cc.remote, lay.word(l), cc.local, lay.word(l), st.compare, st.compare+1)
		if err != nil {
			return named("conn.Conn.CompareAndSwapWait", err)
		}
		return st.casDone(old, m.cfg.check)
	case opFAA:
		old, err := c.FetchAndAddWait(ctx, cc.remote, lay.word(l), cc.local, lay.word(l), 1)
		if err != nil {
			return named("conn.Conn.FetchAndAddWait", err)
		}
		return st.faaDone(old, m.cfg.check)
	}
	return fmt.Errorf("unknown operation %d", m.op)
}

// pingPong posts the receive for the echo, sends, and waits for the echo:
// a round trip.
func (m *measurement) pingPong(ctx context.Context, cc *clientConn, st *opState) error {
	l, lay := st.lane, cc.lay
	tag := recvTag | uint64(l)
	if err := cc.c.Recv(cc.local, lay.second(l), m.size, tag); err != nil {
		return named("conn.Conn.Recv", err)
	}
	if err := cc.c.SendWait(ctx, cc.local, lay.first(l), m.size); err != nil {
		return named("conn.Conn.SendWait", err)
	}
	wc, err := cc.c.CQ().WaitFor(ctx, tag)
	if err != nil {
		return named("cq.CQ.WaitFor (the echo)", err)
	}
	if int(wc.ByteLen) != m.size || wc.Opcode != rpma.WCRecv {
		return fmt.Errorf("the echo: %d bytes (opcode %v), want %d", wc.ByteLen, wc.Opcode, m.size)
	}
	return nil
}

// named says which call failed.
func named(call string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return nil
}
