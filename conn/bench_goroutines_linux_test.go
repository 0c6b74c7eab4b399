//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/tsc"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// goroutineCounts are BenchmarkGoroutines' numbers of goroutines on one
// connection (issue 34 item 6).
var goroutineCounts = []int{1, 4, 16, 64}

// goroutineSlot is each goroutine's share of the source and the target:
// room for the largest operation.
const goroutineSlot = 4096

// goroutineEnv is a connected pair for BenchmarkGoroutines: the
// benchmarks' pair plus a remote view of its target registered for the
// persistent flush, with direct write to PMem applied (on DRAM the same
// wire operations as on PMem, without the durability).
type goroutineEnv struct {
	*benchEnv
	persist *mr.Remote
}

func newGoroutineEnv(b *testing.B) *goroutineEnv {
	env := newBenchPair(b, b, 64*goroutineSlot, nil)
	m, err := mr.Reg(env.peer, env.dstMem, mr.UsageWriteDst|mr.UsageFlushPersistent)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, m.Dereg()) })
	d := m.Descriptor()
	persist, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(b, err)
	require.NoError(b, env.client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}))
	return &goroutineEnv{benchEnv: env, persist: persist}
}

// goroutineOp is one operation of goroutine g, at its own offset, through
// the per-operation waiting calls.
type goroutineOp func(ctx context.Context, g int) error

func (e *goroutineEnv) goroutineOps() map[string]goroutineOp {
	c := e.client
	return map[string]goroutineOp{
		"Write64": func(ctx context.Context, g int) error {
			return c.WriteWait(ctx, e.rdst, g*goroutineSlot, e.src, g*goroutineSlot, 64)
		},
		"Read64": func(ctx context.Context, g int) error {
			return c.ReadWait(ctx, e.src, g*goroutineSlot, e.rdst, g*goroutineSlot, 64)
		},
		"WriteAndPersist64": func(ctx context.Context, g int) error {
			return c.WriteAndFlushWait(ctx, e.persist, g*goroutineSlot, e.src, g*goroutineSlot, 64, rpma.FlushPersistent)
		},
		"WriteAndPersist4K": func(ctx context.Context, g int) error {
			return c.WriteAndFlushWait(ctx, e.persist, g*goroutineSlot, e.src, g*goroutineSlot, 4096, rpma.FlushPersistent)
		},
	}
}

// goroutineRows are the operations, in order.
var goroutineRows = []string{"Write64", "Read64", "WriteAndPersist64", "WriteAndPersist4K"}

// runGoroutines runs b.N operations over g goroutines, each taking the
// next operation's number until b.N are taken, and reports per completed
// operation the cgo crossings (runtime/metrics' /cgo/go-to-c-calls) and
// the p50, p99 and p99.9 of the operations' own times (post to return,
// stamped with the TSC), besides ns/op (the wall time over b.N: the
// inverse of the throughput) and, with -benchmem, the allocations. With
// RPMA_BENCH_WAKEUPS naming a directory it also records the run's
// execution trace there (runTrace: the goroutine wake-ups are counted
// from it by benchplot -wakeups) and reports, per operation, what the
// threads cost (threadCounts): sleeps/op, the threads' voluntary context
// switches, and futex/op, their futex calls.
func runGoroutines(b *testing.B, g int, op func(g int) error) {
	stamps := make([]uint64, b.N)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		clock tsc.Clock
		errs  = make([]error, g)
	)
	b.ResetTimer()
	traced := startRunTrace(b, b.Name(), b.N)
	var threads *threadCounts
	if traced != nil {
		threads = startThreadCounts(true)
	}
	clock.Start()
	calls := cgoCalls()
	for i := range g {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				start := tsc.Read()
				if err := op(i); err != nil {
					errs[i] = err
					return
				}
				stamps[n-1] = tsc.Read() - start
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	crossings := cgoCalls() - calls
	clock.Stop()
	if traced != nil {
		sleeps, futex := threads.stop()
		traced.stop(b)
		b.ReportMetric(float64(sleeps)/float64(b.N), "sleeps/op")
		if futex >= 0 {
			b.ReportMetric(float64(futex)/float64(b.N), "futex/op")
		}
	}
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(crossings)/float64(b.N), "crossings/op")
	slices.Sort(stamps)
	for _, p := range []struct {
		permille int
		unit     string
	}{{500, "p50-ns"}, {990, "p99-ns"}, {999, "p999-ns"}} {
		b.ReportMetric(float64(clock.Duration(stamps[nearestRank(len(stamps), p.permille)])), p.unit)
	}
}

// BenchmarkGoroutines (issue 34 item 6): G goroutines on one connection,
// each calling a per-operation waiting call (WriteWait, ReadWait,
// WriteAndFlushWait to persistence) on its own 4 KiB of the target, for
// G = 1, 4, 16 and 64; and two baselines: Raw, the one-goroutine post and
// busy poll of the mirror (BenchmarkOps' loop), and Dispatcher, what a
// user had to write before the waiting calls: the mirror's posts from G
// goroutines, each with a channel of its own, and one goroutine that
// waits on the CQ and hands each completion to its owner's channel.
// Run in the VM with scripts/bench-goroutines.sh.
func BenchmarkGoroutines(b *testing.B) {
	env := newGoroutineEnv(b)
	ops := env.goroutineOps()
	ctx := context.Background()
	for _, name := range goroutineRows {
		op := ops[name]
		for _, g := range goroutineCounts {
			b.Run(fmt.Sprintf("%s/G=%d", name, g), func(b *testing.B) {
				runGoroutines(b, g, func(i int) error { return op(ctx, i) })
			})
		}
	}
	b.Run("Raw/Write64/G=1", func(b *testing.B) {
		c := env.client
		runGoroutines(b, 1, func(int) error {
			if err := c.Write(env.rdst, 0, env.src, 0, 64, rpma.CompletionAlways, 1); err != nil {
				return err
			}
			env.spin(b, c.CQ(), 1)
			return nil
		})
	})
	for _, g := range goroutineCounts {
		b.Run(fmt.Sprintf("Dispatcher/Write64/G=%d", g), func(b *testing.B) {
			d := startDispatcher(b, env.client, g)
			runGoroutines(b, g, func(i int) error { return d.write(env, i) })
			d.stop()
		})
	}
}

// dispatcher is the hand-written baseline: posts through the mirror with
// the goroutine's number as the op context, one goroutine waiting on the
// CQ (event mode, as a user who cannot spend a core on polling would)
// and handing each completion to its owner's channel. A full queue makes
// the poster yield and try again.
type dispatcher struct {
	c      *conn.Conn
	done   []chan error
	cancel context.CancelFunc
	ended  chan struct{}
}

func startDispatcher(b *testing.B, c *conn.Conn, g int) *dispatcher {
	ctx, cancel := context.WithCancel(context.Background())
	d := &dispatcher{c: c, done: make([]chan error, g), cancel: cancel, ended: make(chan struct{})}
	for i := range d.done {
		d.done[i] = make(chan error, 1)
	}
	go func() {
		defer close(d.ended)
		wcs := make([]cq.WC, 16)
		for {
			n, err := c.CQ().GetWC(wcs)
			if errors.Is(err, rpma.ErrNoCompletion) {
				if err := c.CQ().Wait(ctx); err != nil {
					return // stopped
				}
				continue
			}
			if err != nil {
				b.Error(err)
				return
			}
			for _, wc := range wcs[:n] {
				d.done[wc.OpContext] <- wc.Err()
			}
		}
	}()
	return d
}

func (d *dispatcher) write(env *goroutineEnv, i int) error {
	for {
		err := d.c.Write(env.rdst, i*goroutineSlot, env.src, i*goroutineSlot, 64, rpma.CompletionAlways, uint64(i))
		if errors.Is(err, rpma.ErrQueueFull) {
			runtime.Gosched()
			continue
		}
		if err != nil {
			return err
		}
		return <-d.done[i]
	}
}

func (d *dispatcher) stop() {
	d.cancel()
	<-d.ended
}
