//go:build rpma_stubnic && linux && cgo && !rpma_fake

package ibv_test

// CPU per operation as hardware would see it (issue 36, item 4): the
// package's real cgo wrappers on the stub provider (rpma_stubnic.h),
// natively on the host, against a C loop making librpma's calls on the
// same stub. Run:
//
//	go test -tags rpma_stubnic -run '^$' -bench StubNIC -count 5 ./internal/ibv/
//
// Each row reports ns/op and, where the host lets a process count its
// own instructions (perf_event_open, PERF_COUNT_HW_INSTRUCTIONS, user
// space, this thread), insns/op; the Phased rows split an operation into
// its post and its poll (post-ns, poll-ns, post-insns, poll-insns).
// doc/notes/native-stub.md has the method and the figures.

import (
	"encoding/binary"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
)

// phaseBatch is the Phased rows' batch: posts, then as many polls, each
// run timed as a whole so that the clock's cost spreads over it.
const phaseBatch = 32

// insnCounter counts the user-space instructions of the calling thread
// (the benchmark locks its goroutine to it), or says why it cannot.
type insnCounter struct {
	fd int
}

var insnUnavailable sync.Once

// openInsns opens the counter on the current thread; fd is -1 when the
// host refuses (a container or a VM without a PMU: ENOENT, EACCES), said
// once in the log. The caller has locked its goroutine to the thread.
func openInsns(b *testing.B) insnCounter {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_HARDWARE,
		Config: unix.PERF_COUNT_HW_INSTRUCTIONS,
		Bits:   unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		insnUnavailable.Do(func() {
			b.Logf("instructions not counted: perf_event_open(PERF_COUNT_HW_INSTRUCTIONS): %v", err)
		})
		return insnCounter{fd: -1}
	}
	b.Cleanup(func() { unix.Close(fd) })
	return insnCounter{fd: fd}
}

// read returns the count so far (0 without a counter).
func (c insnCounter) read() int64 {
	if c.fd < 0 {
		return 0
	}
	var buf [8]byte
	if n, err := unix.Read(c.fd, buf[:]); err != nil || n != len(buf) {
		return 0
	}
	return int64(binary.NativeEndian.Uint64(buf[:]))
}

// report adds insns/op for the n operations between two reads.
func (c insnCounter) report(b *testing.B, from, to int64, n int) {
	if c.fd >= 0 && n > 0 {
		b.ReportMetric(float64(to-from)/float64(n), "insns/op")
	}
}

// BenchmarkStubNIC runs every row, Go's then C's.
func BenchmarkStubNIC(b *testing.B) {
	b.Run("Go", benchStubGo)
	b.Run("C", benchStubC)
}

// batchWRs is the Batch8Reap row's chain.
var batchWRs [8]ibv.BatchWR

// goRows are the Go rows: each is one operation through the package's
// real wrappers, checked for its outcome.
var goRows = []struct {
	name string
	op   func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64)
}{
	// One crossing and back, to a C function that does nothing.
	{"Crossing", func(*testing.B, *ibv.StubNIC, *ibv.WCBuf, uint64) { ibv.Crossing() }},
	// internal/core's post of a signaled 64-byte write: PostSend, whose
	// crossing also reaps the CQ (the completion is there at once).
	{"WriteReap", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		errno, reaped := s.QP.PostSend(i, ibv.OpRDMAWrite, ibv.SendSignaled, 0x1000, 64, 1, 0x2000, 2, 0, s.CQ.ReapInto(wcs, 0, 1))
		if errno != 0 || reaped != 1 || wcs.Slice()[0].WRID != i {
			b.Fatalf("post: errno %v, reaped %d", errno, reaped)
		}
	}},
	// The same with the completion polled in a crossing of its own, as
	// librpma's rpma_write + rpma_cq_get_wc.
	{"WritePoll", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		errno, _ := s.QP.PostSend(i, ibv.OpRDMAWrite, ibv.SendSignaled, 0x1000, 64, 1, 0x2000, 2, 0, ibv.Reap{})
		got, err := s.CQ.Poll(wcs, 0, 1)
		if errno != 0 || err != nil || got != 1 || wcs.Slice()[0].WRID != i {
			b.Fatalf("post: errno %v; poll: %d, %v", errno, got, err)
		}
	}},
	{"ReadReap", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		errno, reaped := s.QP.PostSend(i, ibv.OpRDMARead, ibv.SendSignaled, 0x1000, 64, 1, 0x2000, 2, 0, s.CQ.ReapInto(wcs, 0, 1))
		if errno != 0 || reaped != 1 || wcs.Slice()[0].WRID != i {
			b.Fatalf("post: errno %v, reaped %d", errno, reaped)
		}
	}},
	// core's WriteAndFlush with the emulated flush: an unsignaled write
	// and a signaled 8-byte read as one chain, reaped in the crossing.
	{"WriteFlushReap", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		errno, posted, reaped := s.QP.PostWriteRead(i, 0, 0x1000, 64, 1, 0x2000, 2, i, ibv.SendSignaled, 0x3000, 3, 0x2000, s.CQ.ReapInto(wcs, 0, 2))
		if errno != 0 || posted != 2 || reaped != 1 {
			b.Fatalf("post: errno %v, posted %d, reaped %d", errno, posted, reaped)
		}
	}},
	// core's AtomicWrite where it is emulated: an inline, fenced 8-byte write.
	{"Inline8Reap", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		errno, reaped := s.QP.PostInline8(i, ibv.SendSignaled|ibv.SendFence, 0x2000, 2, i, s.CQ.ReapInto(wcs, 0, 1))
		if errno != 0 || reaped != 1 || wcs.Slice()[0].WRID != i {
			b.Fatalf("post: errno %v, reaped %d", errno, reaped)
		}
	}},
	// A remote fetch-and-add (core's FetchAndAdd).
	{"FetchAddReap", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		errno, reaped := s.QP.PostAtomic(i, ibv.OpAtomicFetchAdd, ibv.SendSignaled, 0x1000, 1, 0x2000, 2, 1, 0, s.CQ.ReapInto(wcs, 0, 1))
		if errno != 0 || reaped != 1 || wcs.Slice()[0].WRID != i {
			b.Fatalf("post: errno %v, reaped %d", errno, reaped)
		}
	}},
	// A batch of 8 writes, the last signaled, as one chain (core's
	// batches); ns/op is per batch.
	{"Batch8Reap", func(b *testing.B, s *ibv.StubNIC, wcs *ibv.WCBuf, i uint64) {
		wrs := &batchWRs // core keeps its batch's array too: a local one would escape (the crossing)
		for k := range wrs {
			wrs[k] = ibv.BatchWR{WRID: i, LAddr: 0x1000, RAddr: 0x2000, Op: ibv.OpRDMAWrite, Len: 64, LKey: 1, RKey: 2}
		}
		wrs[7].Flags = ibv.SendSignaled
		errno, posted, reaped := s.QP.PostBatch(wrs[:], s.CQ.ReapInto(wcs, 0, 1))
		if errno != 0 || posted != 8 || reaped != 1 {
			b.Fatalf("post: errno %v, posted %d, reaped %d", errno, posted, reaped)
		}
	}},
	// A receive (the stub completes none: the post alone).
	{"RecvPost", func(b *testing.B, s *ibv.StubNIC, _ *ibv.WCBuf, i uint64) {
		if errno := s.QP.PostRecv(i, 0x1000, 64, 1); errno != 0 {
			b.Fatalf("post: errno %v", errno)
		}
	}},
	// The arming half of a wait (ibv_req_notify_cq).
	{"ReqNotify", func(b *testing.B, s *ibv.StubNIC, _ *ibv.WCBuf, _ uint64) {
		if err := s.CQ.ReqNotify(false); err != nil {
			b.Fatal(err)
		}
	}},
}

func benchStubGo(b *testing.B) {
	for _, row := range goRows {
		b.Run(row.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s, wcs := newStub(b, 64, 2)
			insns := openInsns(b)
			b.ReportAllocs()
			var i uint64
			from := insns.read()
			for b.Loop() {
				row.op(b, s, wcs, i)
				i++
			}
			insns.report(b, from, insns.read(), b.N)
		})
	}
	b.Run("Phased", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s, wcs := newStub(b, 64, 1)
		insns := openInsns(b)
		b.ReportAllocs()
		var postNS, pollNS time.Duration
		var postInsns, pollInsns int64
		var i uint64
		for b.Loop() {
			t0, c0 := time.Now(), insns.read()
			for k := range uint64(phaseBatch) {
				if errno, _ := s.QP.PostSend(i+k, ibv.OpRDMAWrite, ibv.SendSignaled, 0x1000, 64, 1, 0x2000, 2, 0, ibv.Reap{}); errno != 0 {
					b.Fatalf("post: %v", errno)
				}
			}
			t1, c1 := time.Now(), insns.read()
			for k := range uint64(phaseBatch) {
				if got, err := s.CQ.Poll(wcs, 0, 1); err != nil || got != 1 || wcs.Slice()[0].WRID != i+k {
					b.Fatalf("poll: %d, %v", got, err)
				}
			}
			t2, c2 := time.Now(), insns.read()
			postNS += t1.Sub(t0)
			pollNS += t2.Sub(t1)
			postInsns += c1 - c0
			pollInsns += c2 - c1
			i += phaseBatch
		}
		ops := float64(b.N * phaseBatch)
		b.ReportMetric(float64(postNS)/ops, "post-ns")
		b.ReportMetric(float64(pollNS)/ops, "poll-ns")
		if insns.fd >= 0 {
			b.ReportMetric(float64(postInsns)/ops, "post-insns")
			b.ReportMetric(float64(pollInsns)/ops, "poll-insns")
		}
	})
}

// cRows are the C loops (rpma_stubnic.h), each run as one C call of
// b.N operations.
var cRows = []struct {
	name string
	kind ibv.CLoopKind
}{
	{"Raw", ibv.CLoopRaw},
	{"WritePoll", ibv.CLoopWritePoll},
	{"ReadPoll", ibv.CLoopReadPoll},
	{"WriteFlushPoll", ibv.CLoopWriteFlush},
	{"FlushPoll", ibv.CLoopFlush},
	{"AtomicWritePoll", ibv.CLoopAtomicWrite},
	{"SendPoll", ibv.CLoopSend},
	{"ReqNotify", ibv.CLoopNotify},
}

func benchStubC(b *testing.B) {
	for _, row := range cRows {
		b.Run(row.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s, _ := newStub(b, 64, 1)
			insns := openInsns(b)
			b.ResetTimer()
			r := s.CLoop(row.kind, int64(b.N), 1, insns.fd)
			b.StopTimer()
			if r.Err != 0 {
				b.Fatalf("C loop: librpma error %d", r.Err)
			}
			insns.report(b, 0, r.Insns, b.N)
		})
	}
	b.Run("Phased", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s, _ := newStub(b, 64, 1)
		insns := openInsns(b)
		n := int64(b.N) * phaseBatch
		b.ResetTimer()
		r := s.CLoop(ibv.CLoopPhased, n, phaseBatch, insns.fd)
		b.StopTimer()
		if r.Err != 0 {
			b.Fatalf("C loop: librpma error %d", r.Err)
		}
		b.ReportMetric(float64(r.PostNS)/float64(n), "post-ns")
		b.ReportMetric(float64(r.PollNS)/float64(n), "poll-ns")
		if insns.fd >= 0 {
			b.ReportMetric(float64(r.PostInsns)/float64(n), "post-insns")
			b.ReportMetric(float64(r.PollInsns)/float64(n), "poll-insns")
		}
	})
}
