package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// busy drives w's lanes as perftest does: it keeps one operation per lane
// posted (the mirror's calls, signaled) and polls the connection's CQ in
// a loop, never sleeping. Only this goroutine polls the connection.
func (m *measurement) busy(ctx context.Context, w *worker) error {
	q := w.cc.c.CQ()
	wcs := make([]cq.WC, 2*len(w.states))
	t0 := make([]time.Time, len(w.states))
	pending := make([]int, len(w.states)) // completions each lane awaits
	byLane := make(map[int]int, len(w.states))
	inflight := 0
	for i, st := range w.states {
		byLane[st.lane] = i
		if m.more(st) {
			t0[i] = time.Now()
			n, err := m.post(w.cc, st)
			if err != nil {
				return err
			}
			pending[i] = n
			inflight++
		}
	}
	for empty := 0; inflight > 0; {
		n, err := q.GetWC(wcs)
		if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			return named("cq.CQ.GetWC", err)
		}
		if n == 0 {
			if empty++; empty&255 == 0 {
				select {
				case <-ctx.Done():
					return context.Cause(ctx)
				default:
				}
			}
			continue
		}
		now := time.Now()
		m.progress(w, now)
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return fmt.Errorf("completion (op context %#x): %w", wc.OpContext, err)
			}
			i, ok := byLane[int(wc.OpContext&^recvTag)]
			if !ok || pending[i] == 0 {
				return fmt.Errorf("unexpected completion (op context %#x)", wc.OpContext)
			}
			if pending[i]--; pending[i] > 0 {
				continue
			}
			st := w.states[i]
			st.lat = append(st.lat, int64(now.Sub(t0[i])))
			st.ops++
			inflight--
			if err := m.completed(w.cc, st); err != nil {
				return err
			}
			if m.more(st) {
				t0[i] = time.Now()
				if pending[i], err = m.post(w.cc, st); err != nil {
					return err
				}
				inflight++
			}
		}
	}
	return nil
}

// post posts one operation of lane st, signaled, with the lane as op
// context, and returns how many completions it will have.
func (m *measurement) post(cc *clientConn, st *opState) (int, error) {
	c, l, n, lay := cc.c, st.lane, m.size, cc.lay
	ctx := uint64(l)
	always := rpma.CompletionAlways
	switch m.op {
	case opWrite:
		return 1, named("conn.Conn.Write", c.Write(cc.remote, lay.second(l), cc.local, lay.first(l), n, always, ctx))
	case opRead:
		return 1, named("conn.Conn.Read", c.Read(cc.local, lay.second(l), cc.remote, lay.first(l), n, always, ctx))
	case opFlushPersistent, opFlushVisibility:
		return 1, named("conn.Conn.Flush", c.Flush(cc.remote, lay.second(l), n, m.op.flushType(), always, ctx))
	case opWriteFlushPersistent, opWriteFlushVisibility:
		return 1, named("conn.Conn.WriteAndFlush",
			c.WriteAndFlush(cc.remote, lay.second(l), cc.local, lay.first(l), n, m.op.flushType(), always, ctx))
	case opAtomicWrite:
		return 1, named("conn.Conn.AtomicWrite", c.AtomicWrite(cc.remote, lay.word(l), st.nextWord(), always, ctx))
	case opSend:
		if err := c.Recv(cc.local, lay.second(l), n, recvTag|ctx); err != nil {
			return 0, named("conn.Conn.Recv", err)
		}
		return 2, named("conn.Conn.Send", c.Send(cc.local, lay.first(l), n, always, ctx))
	case opCAS:
		return 1, named("conn.Conn.CompareAndSwap",
			c.CompareAndSwap(cc.remote, lay.word(l), cc.local, lay.word(l), st.compare, st.compare+1, always, ctx))
	case opFAA:
		return 1, named("conn.Conn.FetchAndAdd", c.FetchAndAdd(cc.remote, lay.word(l), cc.local, lay.word(l), 1, always, ctx))
	}
	return 0, fmt.Errorf("unknown operation %d", m.op)
}

// completed takes what a completed operation of lane st returned: the old
// value of a remote atomic.
func (m *measurement) completed(cc *clientConn, st *opState) error {
	if m.op != opCAS && m.op != opFAA {
		return nil
	}
	off := cc.lay.word(st.lane)
	old := binary.NativeEndian.Uint64(cc.local.Bytes()[off : off+atomicSize])
	if m.op == opCAS {
		return st.casDone(old, m.cfg.check)
	}
	return st.faaDone(old, m.cfg.check)
}
