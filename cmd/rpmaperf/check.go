package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
)

// prepare fills the source slots of cc with the run's pattern and clears
// its destination slots and result words, so that -check sees only what
// the run moved.
func (m *measurement) prepare(cc *clientConn) {
	b := cc.local.Bytes()
	for l := range cc.lay.lanes {
		src := b[cc.lay.first(l):][:m.size]
		for i := range src {
			src[i] = writeByte(m.seed, i)
		}
		clear(b[cc.lay.second(l):][:m.size])
		clear(b[cc.lay.word(l):][:atomicSize])
	}
}

// verify checks, after the run, the data w's lanes moved: what writes
// left in the server's region (read back), what reads and echoes brought,
// and the atomic words' last values.
func (m *measurement) verify(parent context.Context, w *worker) error {
	ctx, cancel := context.WithTimeout(parent, m.cfg.timeout)
	defer cancel()
	cc := w.cc
	b := cc.local.Bytes()
	for _, st := range w.states {
		if st.ops == 0 {
			continue
		}
		l := st.lane
		dst := b[cc.lay.second(l):][:m.size]
		switch {
		case m.op.writes():
			if err := cc.c.ReadWait(ctx, cc.local, cc.lay.second(l), cc.remote, cc.lay.second(l), m.size); err != nil {
				return named("reading the written data back: conn.Conn.ReadWait", err)
			}
			if err := comparePattern(dst, func(i int) byte { return writeByte(m.seed, i) }); err != nil {
				return fmt.Errorf("lane %d wrote: %w", l, err)
			}
		case m.op == opRead:
			if err := comparePattern(dst, func(i int) byte { return readByte(cc.lay.first(l) + i) }); err != nil {
				return fmt.Errorf("lane %d read: %w", l, err)
			}
		case m.op == opSend:
			if err := comparePattern(dst, func(i int) byte { return writeByte(m.seed, i) }); err != nil {
				return fmt.Errorf("lane %d's echo: %w", l, err)
			}
		case m.op.atomic():
			if err := m.verifyWord(ctx, cc, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifyWord reads lane st's word back: it holds the last value written,
// or the value the lane's compare-and-swaps and fetch-and-adds left.
func (m *measurement) verifyWord(ctx context.Context, cc *clientConn, st *opState) error {
	off := cc.lay.word(st.lane)
	if err := cc.c.ReadWait(ctx, cc.local, off, cc.remote, off, atomicSize); err != nil {
		return named("reading the word back: conn.Conn.ReadWait", err)
	}
	got := binary.NativeEndian.Uint64(cc.local.Bytes()[off:][:atomicSize])
	want := map[op]uint64{opAtomicWrite: st.seq, opCAS: st.compare, opFAA: st.last + 1}[m.op]
	if got != want {
		return fmt.Errorf("%s on lane %d: the word holds %d, want %d", m.op, st.lane, got, want)
	}
	return nil
}

// comparePattern checks that b[i] == want(i) for every i.
func comparePattern(b []byte, want func(int) byte) error {
	exp := make([]byte, len(b))
	for i := range exp {
		exp[i] = want(i)
	}
	if i := mismatch(b, exp); i >= 0 {
		return fmt.Errorf("byte %d of %d is %#02x, want %#02x", i, len(b), b[i], exp[i])
	}
	return nil
}

// mismatch is the first index where a and b differ, or -1.
func mismatch(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}
