//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"math"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/tsc"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// envBenchYield=0 turns the data path's periodic yield off
// (core.Tuning.NoYield), so that one binary measures both
// (scripts/bench-sched.sh).
const envBenchYield = "RPMA_BENCH_YIELD"

// envBenchGate=0 keeps the completion channels watched from their
// creation (core.Tuning.NoGate), so that one binary measures both.
const envBenchGate = "RPMA_BENCH_GATE"

// envBenchWarmup=N runs each row's operation N times before its timed
// loop (b.Loop starts the timer at its first call), as rpma_lat's -w
// does: the first few hundred operations of a row cost more, in Go and
// in C (doc/notes/performance-lab-notes.md, "Warm-up (2026-12-05)").
const envBenchWarmup = "RPMA_BENCH_WARMUP"

// envBenchSyscalls=1 makes BenchmarkOps report syscalls/op (every
// process's system calls, counted at the raw_syscalls:sys_enter
// tracepoint on every CPU: in the test VM the benchmark makes nearly all)
// with futex/op and clock/op (futex and clock_gettime calls among them:
// the runtime's; clock_gettime is a system call only where the clock
// source has no vDSO path, as in the test VM) and sleeps/op (the process's
// voluntary context switches), where the
// kernel lets it count them (root, tracefs). Off by default: the counter
// slows every system call a little.
const envBenchSyscalls = "RPMA_BENCH_SYSCALLS"

// benchWarmup returns the warm-up operations of each row (envBenchWarmup).
func benchWarmup(tb testing.TB) int {
	v := os.Getenv(envBenchWarmup)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		tb.Fatalf("%s=%q: want a count of operations", envBenchWarmup, v)
	}
	return n
}

// envBenchSpin=0 turns the spin before a park off (core.Tuning.NoSpin):
// every wait that finds nothing parks, with its CQ armed all the time. A
// duration (RPMA_BENCH_SPIN=1ms) sets the benchmark connections'
// conn.Config.SpinLimit instead.
const envBenchSpin = "RPMA_BENCH_SPIN"

// benchSpinConfig returns cfg with the SpinLimit envBenchSpin gives, if
// it gives a duration (cfg is copied; nil means the defaults).
func benchSpinConfig(tb testing.TB, cfg *conn.Config) *conn.Config {
	v := os.Getenv(envBenchSpin)
	if v == "" || v == "0" {
		return cfg
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		tb.Fatalf("%s=%q: want 0 or a duration", envBenchSpin, v)
	}
	c := conn.DefaultConfig()
	if cfg != nil {
		*c = *cfg
	}
	c.SpinLimit = d
	return c
}

// benchTuning is the tuning the environment asks the benchmarks' peers
// for (envBenchYield, envBenchGate, envBenchReap, envBenchSpin).
func benchTuning() core.Tuning {
	return core.Tuning{
		NoYield: os.Getenv(envBenchYield) == "0",
		NoGate:  os.Getenv(envBenchGate) == "0",
		NoReap:  os.Getenv(envBenchReap) == "0",
		NoSpin:  os.Getenv(envBenchSpin) == "0",
	}
}

// newBenchPeer is a peer on dev with benchTuning's settings, plus the
// emulated atomic write when emulateAtomicWrite.
func newBenchPeer(tb testing.TB, dev *peer.Device, emulateAtomicWrite bool) *peer.Peer {
	tb.Helper()
	p, err := peer.New(dev)
	require.NoError(tb, err)
	t := benchTuning()
	t.EmulateAtomicWrite = emulateAtomicWrite
	(*core.Peer)(p).SetTuning(t)
	return p
}

// benchEnv is a connected pair with registered memory on both sides.
type benchEnv struct {
	client, server *conn.Conn
	src, dst       *mr.Local
	rdst           *mr.Remote
	wcs            []cq.WC
	peer           *peer.Peer
	dstMem         []byte // dst's memory
}

func newBenchEnv(tb testing.TB) *benchEnv {
	tb.Helper()
	return newBenchPair(tb, tb, 1<<15, nil)
}

// benchUsage is the benchmarks' regions' usage: every one but the
// persistent flush.
const benchUsage = mr.UsageReadSrc | mr.UsageReadDst | mr.UsageWriteSrc | mr.UsageWriteDst | mr.UsageFlushVisibility | mr.UsageSend | mr.UsageRecv

// newBenchPair sets up a connected pair with cfg (nil: the default) and
// two registered regions of half bytes each, src and dst (the remote one),
// with every usage but the persistent flush. owner (the top-level test or
// benchmark) closes it all when it ends; tb fails on an error.
func newBenchPair(tb, owner testing.TB, half int, cfg *conn.Config) *benchEnv {
	tb.Helper()
	return newTunedBenchPair(tb, owner, half, cfg, false)
}

// newTunedBenchPair is newBenchPair, with the emulated atomic write when
// emulateAtomicWrite.
func newTunedBenchPair(tb, owner testing.TB, half int, cfg *conn.Config, emulateAtomicWrite bool) *benchEnv {
	tb.Helper()
	cfg = benchSpinConfig(tb, cfg)
	ip := rdmatest.IP(tb)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(tb, err)
	p := newBenchPeer(tb, dev, emulateAtomicWrite)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(tb, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := make(chan result[*conn.Conn], 1)
	go func() {
		req, err := e.NextConnReq(ctx, cfg)
		if err != nil {
			srv <- result[*conn.Conn]{err: err}
			return
		}
		c, err := req.Connect(nil)
		srv <- result[*conn.Conn]{v: c, err: err}
	}()
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), cfg)
	require.NoError(tb, err)
	client, err := req.Connect(nil)
	require.NoError(tb, err)
	r := <-srv
	require.NoError(tb, r.err)
	server := r.v
	for _, c := range []*conn.Conn{client, server} {
		ev, err := c.NextEvent(ctx)
		require.NoError(tb, err)
		require.Equal(tb, rpma.ConnEstablished, ev)
	}
	mem, err := pmem.Alloc(2 * half)
	require.NoError(tb, err)
	src, err := mr.Reg(p, mem.Bytes()[:half], benchUsage)
	require.NoError(tb, err)
	dst, err := mr.Reg(p, mem.Bytes()[half:], benchUsage)
	require.NoError(tb, err)
	d := dst.Descriptor()
	rdst, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(tb, err)
	owner.Cleanup(func() {
		require.NoError(owner, client.Close())
		require.NoError(owner, server.Close())
		require.NoError(owner, src.Dereg())
		require.NoError(owner, dst.Dereg())
		require.NoError(owner, mem.Close())
		require.NoError(owner, e.Close())
		require.NoError(owner, p.Close())
		require.NoError(owner, dev.Close())
	})
	return &benchEnv{client: client, server: server, src: src, dst: dst, rdst: rdst, wcs: make([]cq.WC, 8),
		peer: p, dstMem: mem.Bytes()[half:]}
}

// spin busy-polls q until it has delivered n completions, without
// waiting (waits are not held to zero allocations). An empty poll is told
// by comparing with the sentinel GetWC returns then, as rpma_lat compares
// rpma_cq_get_wc's int, not by errors.Is (which walks the error's chain
// on every empty poll); any other error fails the benchmark.
func (b *benchEnv) spin(tb testing.TB, q *cq.CQ, n int) {
	for n > 0 {
		got, err := q.GetWC(b.wcs)
		if err != nil {
			if err == rpma.ErrNoCompletion {
				continue
			}
			tb.Fatal(err)
		}
		for i := range got { // by index: no copy of each completion, as rpma_lat's loop
			if b.wcs[i].Status != rpma.WCSuccess {
				tb.Fatal(b.wcs[i].Err())
			}
		}
		n -= got
	}
}

// ops are the measured operations: each posts one operation (or chain)
// with a completion and polls it.
func (b *benchEnv) ops() map[string]func(tb testing.TB, i int) {
	c, A, O := b.client, rpma.CompletionAlways, rpma.CompletionOnError
	return map[string]func(tb testing.TB, i int){
		"Write64": func(tb testing.TB, i int) {
			if err := c.Write(b.rdst, 0, b.src, 0, 64, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
		},
		"Read64": func(tb testing.TB, i int) {
			if err := c.Read(b.src, 0, b.rdst, 64, 64, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
		},
		"Flush": func(tb testing.TB, i int) {
			if err := c.Flush(b.rdst, 0, 64, rpma.FlushVisibility, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
		},
		"WriteAndFlush64": func(tb testing.TB, i int) {
			if err := c.WriteAndFlush(b.rdst, 0, b.src, 0, 64, rpma.FlushVisibility, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
		},
		"WriteThenFlush64": func(tb testing.TB, i int) {
			if err := c.Write(b.rdst, 0, b.src, 0, 64, O, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			if err := c.Flush(b.rdst, 0, 64, rpma.FlushVisibility, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
		},
		"AtomicWrite": func(tb testing.TB, i int) {
			if err := c.AtomicWrite(b.rdst, 128, [8]byte{byte(i)}, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
		},
		"SendRecv64": func(tb testing.TB, i int) {
			if err := b.server.Recv(b.dst, 256, 64, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			if err := c.Send(b.src, 0, 64, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			b.spin(tb, c.CQ(), 1)
			b.spin(tb, b.server.CQ(), 1)
		},
	}
}

// waitOps are the measured operations completed through the CQ's
// completion event rather than busy polling.
func (b *benchEnv) waitOps() map[string]func(tb testing.TB, i int) {
	c, A := b.client, rpma.CompletionAlways
	ctx := context.Background()
	return map[string]func(tb testing.TB, i int){
		// Write64Wait: post, wait for the completion event, poll.
		"Write64Wait": func(tb testing.TB, i int) {
			if err := c.Write(b.rdst, 0, b.src, 0, 64, A, uint64(i)); err != nil {
				tb.Fatal(err)
			}
			for n := 0; n < 1; {
				if err := c.CQ().Wait(ctx); err != nil {
					tb.Fatal(err)
				}
				got, err := c.CQ().GetWC(b.wcs)
				if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
					tb.Fatal(err)
				}
				n += got
			}
		},
	}
}

// waitPending busy-polls the completion of a write, then waits until its
// completion event is pending on the CQ's fd (poll(2), no crossing), so
// that the next Wait has an event to read. The fd is asked for before
// the write: that arms the CQ for good (an event loop's), so that the
// completion raises its event.
func (b *benchEnv) waitPending(tb testing.TB, i int) {
	c := b.client
	fd := c.CQ().FD()
	if err := c.Write(b.rdst, 0, b.src, 0, 64, rpma.CompletionAlways, uint64(i)); err != nil {
		tb.Fatal(err)
	}
	b.spin(tb, c.CQ(), 1)
	rdmatest.AwaitReadable(tb, fd, 30*time.Second)
}

// cgoCalls reads the runtime's count of calls from Go into C.
func cgoCalls() uint64 {
	s := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestIntegrationCrossings counts the cgo crossings of the data path: a
// wait whose completion event is pending is one crossing (read, ack and
// re-arm); a post is one (it also reaps); and where the completion is
// there when the post returns (rxe's loopback on 6.1), a post plus the
// busy poll of its completion is one crossing in all, the GetWC being
// served from what the post reaped.
func TestIntegrationCrossings(t *testing.T) {
	b := newBenchEnv(t)
	q := b.client.CQ()
	const n = 200
	var waits uint64
	for i := 0; i < n; i++ {
		b.waitPending(t, i)
		before := cgoCalls()
		require.NoError(t, q.Wait(context.Background()))
		waits += cgoCalls() - before
	}
	t.Logf("a CQ.Wait with its event pending: %.2f crossings", float64(waits)/n)
	require.Equal(t, uint64(n), waits, "one crossing per wait with its event pending")

	op := b.ops()["Write64"]
	for i := 0; i < 50; i++ {
		op(t, i)
	}
	before := cgoCalls()
	for i := 0; i < n; i++ {
		op(t, i)
	}
	per := float64(cgoCalls()-before) / n
	t.Logf("Write64 (post + busy-polled completion): %.2f crossings per operation on %s", per, os.Getenv(rdmatest.EnvKernel))
	if strings.HasPrefix(os.Getenv(rdmatest.EnvKernel), "6.1.") {
		require.LessOrEqual(t, per, 1.1, "on 6.1 the post reaps its own completion")
	}
}

// TestIntegrationZeroAllocs: in steady state, posting and polling with an
// integer op context allocate nothing, and neither does a CQ wait whose
// event is pending or a blocking one with a context that cannot be
// cancelled, nor the per-operation waiting calls (WriteWait and the
// rest), with either kind of context.
func TestIntegrationZeroAllocs(t *testing.T) {
	b := newBenchEnv(t)
	ops := b.ops()
	for name, op := range b.waitOps() {
		ops[name] = op
	}
	ctx := context.Background()
	// The per-operation waiting calls (many goroutines, one connection),
	// with a ctx that cannot end and with one that can.
	cancellable, cancel := context.WithCancel(ctx)
	defer cancel()
	for name, wctx := range map[string]context.Context{"": ctx, "Ctx": cancellable} {
		ops["WriteWait64"+name] = func(tb testing.TB, i int) {
			if err := b.client.WriteWait(wctx, b.rdst, 0, b.src, 0, 64); err != nil {
				tb.Fatal(err)
			}
		}
		ops["WriteAndFlushWait64"+name] = func(tb testing.TB, i int) {
			if err := b.client.WriteAndFlushWait(wctx, b.rdst, 0, b.src, 0, 64, rpma.FlushVisibility); err != nil {
				tb.Fatal(err)
			}
		}
		ops["ReadWait64"+name] = func(tb testing.TB, i int) {
			if err := b.client.ReadWait(wctx, b.src, 0, b.rdst, 64, 64); err != nil {
				tb.Fatal(err)
			}
		}
	}
	thr := newBenchPair(t, t, 1<<12, &conn.Config{WaitMode: conn.WaitThread})
	ops["Write64WaitThread"] = thr.waitOps()["Write64Wait"]
	ops["WaitPending"] = func(tb testing.TB, i int) {
		b.waitPending(tb, i)
		if err := b.client.CQ().Wait(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	for name, op := range ops {
		for i := 0; i < 20; i++ { // warm up
			op(t, i)
		}
		// AllocsPerRun counts the whole process's allocations, so a burst
		// from another goroutine (CI once saw 1 alloc/op for Write64Wait,
		// not reproduced in 6 runs) can land in one measurement; an
		// allocation of the operation itself lands in every one. The
		// least of three measurements is the operation's.
		i := 0
		least := math.Inf(1)
		var seen []float64
		for attempt := 0; attempt < 3 && least > 0; attempt++ {
			a := testing.AllocsPerRun(200, func() { op(t, i); i++ })
			seen, least = append(seen, a), min(least, a)
		}
		t.Logf("%s: %v allocs/op (measured: %v)", name, least, seen)
		if strings.Contains(name, "Wait64") {
			// The waiting calls. Under -race they allocate up to 2 (the
			// detector's instrumentation), which says nothing of a
			// normal build. In one, a call that parks with a ctx that can
			// end registers context.AfterFunc to wake its park
			// (internal/core/waiter.go): one allocation, a known cost
			// (the function it runs is the waiter's own); with a ctx
			// that cannot end, none.
			bound := 0.0
			switch {
			case raceEnabled:
				bound = 2
			case strings.HasSuffix(name, "Ctx"):
				bound = 1
			}
			require.LessOrEqual(t, least, bound, name)
			continue
		}
		require.Zero(t, least, name)
	}
}

// benchRows are BenchmarkOps' sub-benchmarks, in order. AtomicWriteEmulated
// is AtomicWrite on a peer made to emulate it (as C librpma 1.2.0 always
// does), so that the two libraries are compared like for like where the
// device has the native one; Write64Wait completes through the CQ's
// completion event (CQ.Wait) instead of busy polling, and
// Write64WaitThread does the same on a connection in conn.WaitThread mode.
var benchRows = []string{"Write64", "Read64", "Flush", "WriteThenFlush64", "WriteAndFlush64", "AtomicWrite", "AtomicWriteEmulated", "SendRecv64", "Write64Wait", "Write64WaitThread"}

// benchWaitCQs are the CQs the rows that wait for completion events wait
// on (benchOps), whose spins BenchmarkOps reports (core.SpinStats).
var benchWaitCQs map[string]*cq.CQ

// benchOps returns the operation of each row, on one connected pair, plus
// a second pair for AtomicWriteEmulated.
// In two-node mode (RPMA_BENCH_SERVER: newOpsEnv) there is no second
// pair, and the rows that need one or the server's help (SendRecv64) are
// left out by the -bench pattern of scripts/bench-2node.sh.
func benchOps(b *testing.B) map[string]func(tb testing.TB, i int) {
	env := newOpsEnv(b)
	ops := env.ops()
	for name, op := range env.waitOps() {
		ops[name] = op
	}
	benchWaitCQs = map[string]*cq.CQ{"Write64Wait": env.client.CQ()}
	if os.Getenv(envBenchServer) != "" {
		return ops
	}
	thr := newBenchPair(b, b, 1<<15, &conn.Config{WaitMode: conn.WaitThread})
	ops["Write64WaitThread"] = thr.waitOps()["Write64Wait"]
	benchWaitCQs["Write64WaitThread"] = thr.client.CQ()
	emu := newTunedBenchPair(b, b, 1<<15, nil, true)
	if emu.client.NativeAtomicWrite() {
		b.Fatal("the emulated atomic write's connection is native")
	}
	ops["AtomicWriteEmulated"] = emu.ops()["AtomicWrite"]
	return ops
}

// BenchmarkOps measures each operation: post plus busy-polled completion
// (Write64Wait: plus the wait for the completion event). The loop does
// nothing else, so ns/op is the operation's mean; BenchmarkOpsStamped
// measures the per-operation distribution.
// Run in the VM: go test -exec "rxevm --" -run '^$' -bench . ./conn/
func BenchmarkOps(b *testing.B) {
	countSyscalls := os.Getenv(envBenchSyscalls) == "1" && systemCalls() >= 0
	ops := benchOps(b)
	for _, name := range benchRows {
		op := ops[name]
		b.Run(name, func(b *testing.B) {
			if op == nil {
				b.Skip("not in two-node mode")
			}
			b.ReportAllocs()
			warm := benchWarmup(b)
			for i := 0; i < warm; i++ {
				op(b, i)
			}
			var threads *threadCounts
			var calls, clocks int64
			if countSyscalls {
				threads, calls, clocks = startThreadCounts(true), systemCalls(), clockCalls()
			}
			wq := (*core.CQ)(benchWaitCQs[name])
			var spins, caught uint64
			if wq != nil {
				spins, caught, _ = core.SpinStats(wq)
			}
			before := cgoCalls()
			for i := warm; b.Loop(); i++ {
				op(b, i)
			}
			b.ReportMetric(float64(cgoCalls()-before)/float64(b.N), "crossings/op")
			if wq != nil {
				s, c, _ := core.SpinStats(wq)
				b.ReportMetric(float64(s-spins)/float64(b.N), "spins/op")
				b.ReportMetric(float64(c-caught)/float64(b.N), "caught/op")
			}
			if countSyscalls {
				sleeps, futex := threads.stop()
				b.ReportMetric(float64(systemCalls()-calls)/float64(b.N), "syscalls/op")
				b.ReportMetric(float64(sleeps)/float64(b.N), "sleeps/op")
				b.ReportMetric(float64(futex)/float64(b.N), "futex/op")
				b.ReportMetric(float64(clockCalls()-clocks)/float64(b.N), "clock/op")
			}
		})
	}
}

// BenchmarkCrossing measures one crossing from Go into C and back, alone
// (a C function that does nothing): with BenchmarkOps' crossings/op it
// says how much of an operation's time over librpma's the crossings
// explain (bin/benchtable's floor table).
func BenchmarkCrossing(b *testing.B) {
	for b.Loop() {
		ibv.Crossing()
	}
}

// BenchmarkOpsStamped runs BenchmarkOps' operations with a time stamp
// (tsc.Read: the TSC, a few ns where time.Now would be a system call) after
// each, and reports their median, 99th and 99.9th percentile as p50-ns,
// p99-ns and p999-ns.
// Its ns/op includes the stamps; take the mean from BenchmarkOps.
func BenchmarkOpsStamped(b *testing.B) {
	ops := benchOps(b)
	for _, name := range benchRows {
		op := ops[name]
		b.Run(name, func(b *testing.B) {
			if op == nil {
				b.Skip("not in two-node mode")
			}
			var lat latencies
			warm := benchWarmup(b)
			for i := 0; i < warm; i++ {
				op(b, i)
			}
			lat.clock.Start()
			last := tsc.Read()
			for i := warm; b.Loop(); i++ {
				op(b, i)
				now := tsc.Read()
				lat.add(now - last)
				last = now
			}
			lat.clock.Stop()
			lat.report(b)
		})
	}
}

// latencies keeps the last latencyRing operations' times, in counts of
// tsc.Read, without allocating, for the p50-ns and p99-ns metrics that C's
// rpma_lat also reports: the mean alone hides whether an operation is
// slower or a few operations wait for a scheduler (on 6.12 rxe completes
// from a kworker).
type latencies struct {
	counts [latencyRing]uint64
	n      int
	clock  tsc.Clock
}

const latencyRing = 1 << 16

func (l *latencies) add(counts uint64) {
	l.counts[l.n%latencyRing] = counts
	l.n++
}

func (l *latencies) report(b *testing.B) {
	s := slices.Clone(l.counts[:min(l.n, latencyRing)])
	if len(s) == 0 {
		return
	}
	slices.Sort(s)
	b.ReportMetric(float64(l.clock.Duration(s[nearestRank(len(s), 500)])), "p50-ns")
	b.ReportMetric(float64(l.clock.Duration(s[nearestRank(len(s), 990)])), "p99-ns")
	b.ReportMetric(float64(l.clock.Duration(s[nearestRank(len(s), 999)])), "p999-ns")
}

// nearestRank returns the index, among n sorted values, of their
// permille-th per-mille by the nearest-rank method: the
// ceil(n*permille/1000)-th smallest. rpma_lat.c's nearest_rank is the
// same, so that Go's and C's percentiles are the same rank (Go's used to
// be one deeper). A p99.9 from fewer than 1000 operations is the maximum.
func nearestRank(n, permille int) int { return max((n*permille+999)/1000, 1) - 1 }

// BenchmarkPostUnsignaled measures posting alone: unsignaled writes, with
// the library's periodic signaled one absorbed by the poll that frees the
// queue.
func BenchmarkPostUnsignaled(b *testing.B) {
	env := newBenchEnv(b)
	c := env.client
	b.ReportAllocs()
	warm := benchWarmup(b)
	for i := 0; i < warm || b.Loop(); i++ { // b.Loop starts the timer at its first call
		for {
			err := c.Write(env.rdst, 0, env.src, 0, 8, rpma.CompletionOnError, uint64(i))
			if err == nil {
				break
			}
			if !errors.Is(err, rpma.ErrQueueFull) {
				b.Fatal(err)
			}
			if _, err := c.CQ().GetWC(env.wcs); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
				b.Fatal(err)
			}
		}
	}
}

// The benchmarks' percentiles are the nearest rank, as rpma_lat.c's: for
// 1000 operations the 500th, 990th and 999th smallest.
func TestNearestRank(t *testing.T) {
	for _, tc := range []struct{ n, permille, want int }{
		{1000, 500, 499}, {1000, 990, 989}, {1000, 999, 998},
		{1001, 500, 500}, {100000, 999, 99899}, {10, 999, 9}, {1, 500, 0},
	} {
		if got := nearestRank(tc.n, tc.permille); got != tc.want {
			t.Errorf("nearestRank(%d, %d) = %d, want %d", tc.n, tc.permille, got, tc.want)
		}
	}
}
