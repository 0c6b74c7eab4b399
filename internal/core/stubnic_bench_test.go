//go:build rpma_stubnic && linux && cgo && !rpma_fake

package core

// The data path's CPU per operation natively (issue 36, item 4): core's
// real post protocol and completion accounting, on the stub provider of
// package ibv (tag rpma_stubnic), whose posts complete at once. The
// connection is wired by hand from the stub's QP and CQ, as createQueues
// wires one from rdma_cm's: the stub has no rdma_cm, and the set-up is no
// part of what is measured. Run:
//
//	go test -tags rpma_stubnic -run '^$' -bench StubNIC -count 5 ./internal/core/
//
// Compare with package ibv's BenchmarkStubNIC (the wrappers alone, and
// librpma's calls in C on the same stub): doc/notes/native-stub.md.

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// stubConn is a connection on a stub NIC, with a local region of 4 KiB
// and the remote region it writes to (the same memory: the stub copies
// nothing).
type stubConn struct {
	nic    *ibv.StubNIC
	c      *Conn
	src    *MR
	remote *RemoteMR
	wc     []WC
}

// newStubConn wires a connection of depth send slots (and as many CQ
// entries) to a stub NIC, as createQueues does, with tune's tuning.
func newStubConn(tb testing.TB, depth int, tune Tuning) *stubConn {
	tb.Helper()
	nic, err := ibv.NewStubNIC(depth)
	require.NoError(tb, err)
	tb.Cleanup(nic.Close)
	p := &Peer{atomicCap: ibv.AtomicHCA}
	dl := &dataLock{tune: tune, period: yieldCounts.Load()}
	cq := &CQ{dl: dl, noReap: tune.NoReap, cq: nic.CQ, fd: -1}
	cq.size = nic.CQ.CQE()
	cq.budget.capacity = int64(cq.size)
	cq.budget.setLimits()
	require.NoError(tb, cq.setStash(cq.size))
	tb.Cleanup(cq.buf.Free)
	cq.open()
	state := &qpState{}
	sq := newWorkQueue(depth, 0, cq, state, errSQFull)
	cq.sq = sq
	cq.budget.setLimits()
	mem := make([]byte, 4096)
	flushMem := make([]byte, 8)
	var pin runtime.Pinner
	pin.Pin(&mem[0])
	pin.Pin(&flushMem[0])
	tb.Cleanup(pin.Unpin)
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	q := queues{
		dl: dl, cq: cq, qp: nic.QP, qpNum: 0x11, state: state, sq: sq,
		flush: &flushBuf{addr: uint64(uintptr(unsafe.Pointer(unsafe.SliceData(flushMem)))), lkey: 2},
	}
	c := &Conn{dl: dl, peer: p, q: q, cq: cq, state: state, qpNum: q.qpNum}
	c.open()
	src := &MR{peer: p, usage: UsageWriteSrc | UsageReadDst | UsageSend, addr: addr, size: uint64(len(mem)), lkey: 1, rkey: 1}
	src.open()
	remote := &RemoteMR{raddr: addr, size: uint64(len(mem)), rkey: 3, usage: UsageWriteDst | UsageReadSrc | UsageFlushVisibility | UsageAtomicDst}
	return &stubConn{nic: nic, c: c, src: src, remote: remote, wc: make([]WC, 1)}
}

// spin busy-polls for one completion, checking it is ctx's and succeeded.
func (s *stubConn) spin(tb testing.TB, ctx uint64) {
	for {
		n, err := s.c.cq.GetWC(s.wc)
		if n == 1 {
			if s.wc[0].OpContext != ctx || s.wc[0].Status != rpma.WCSuccess {
				tb.Fatalf("completion %+v, want context %d", s.wc[0], ctx)
			}
			return
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			tb.Fatal(err)
		}
	}
}

// stubRows are the operations measured, each a post and its completion
// busy-polled (conn's BenchmarkOps rows of the same names).
var stubRows = []struct {
	name string
	op   func(tb testing.TB, s *stubConn, i uint64)
}{
	{"Write64", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.Write(s.remote, 0, s.src, 0, 64, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"Read64", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.Read(s.src, 0, s.remote, 64, 64, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"Flush", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.Flush(s.remote, 0, 64, rpma.FlushVisibility, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"AtomicWrite", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.AtomicWrite(s.remote, 128, [8]byte{byte(i)}, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"FetchAndAdd", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.FetchAndAdd(s.remote, 256, s.src, 512, 1, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"Send64", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.Send(s.src, 0, 64, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"WriteAndFlush64", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.WriteAndFlush(s.remote, 0, s.src, 0, 64, rpma.FlushVisibility, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
	{"WriteThenFlush64", func(tb testing.TB, s *stubConn, i uint64) {
		if err := s.c.Write(s.remote, 0, s.src, 0, 64, rpma.CompletionOnError, i); err != nil {
			tb.Fatal(err)
		}
		if err := s.c.Flush(s.remote, 0, 64, rpma.FlushVisibility, rpma.CompletionAlways, i); err != nil {
			tb.Fatal(err)
		}
		s.spin(tb, i)
	}},
}

// BenchmarkStubNIC measures core's operations on the stub: with the
// reap (the default: the post's crossing polls the CQ, and the busy poll
// finds the completion without one) and without it (Tuning.NoReap: the
// poll crosses, as librpma's rpma_cq_get_wc does).
func BenchmarkStubNIC(b *testing.B) {
	for _, mode := range []struct {
		name string
		tune Tuning
	}{{"Reap", Tuning{}}, {"NoReap", Tuning{NoReap: true}}} {
		for _, row := range stubRows {
			b.Run(mode.name+"/"+row.name, func(b *testing.B) {
				// One thread for the loop, as in package ibv's rows: an
				// instruction count of the thread (perf, callgrind's
				// per-thread counts) is then the operations'.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				s := newStubConn(b, 64, mode.tune)
				b.ReportAllocs()
				var i uint64
				before := runtime.NumCgoCall()
				for b.Loop() {
					row.op(b, s, i)
					i++
				}
				b.ReportMetric(float64(runtime.NumCgoCall()-before)/float64(b.N), "crossings/op")
			})
		}
	}
}

// The stub connection runs core's real data path: every operation's
// completion comes back with its context, whether the post's crossing
// reaped it or the poll crossed for it, past the queues' wrap-around;
// the stub accepted each work request and every completion it made was
// polled.
func TestStubNICConn(t *testing.T) {
	for _, tune := range []Tuning{{}, {NoReap: true}} {
		s := newStubConn(t, 8, tune)
		var i uint64
		for _, row := range stubRows {
			for range 20 {
				row.op(t, s, i)
				i++
			}
		}
		c := s.nic.Counts()
		require.Equal(t, uint64(20*(1+1+1+1+1+1+2+2)), c.Posted, "NoReap %v", tune.NoReap)
		require.Equal(t, uint64(20*2), c.Unsignaled, "the flushes' writes")
		require.Equal(t, c.Completed, c.Polled)
		require.Zero(t, c.Refused)
	}
}
