//go:build linux && cgo

package conn_test

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/tsc"
	"github.com/gorpma/rpma/rpma"
)

// The bandwidth benchmarks' shape (internal/bench/testdata/rpma_bw.c runs
// the same on C librpma, with the same names).
const (
	bwRegion = 16 << 20 // each of src and dst
	bwMaxQD  = 16       // the deepest queue: SQ and CQ hold this many
)

var (
	bwSizes   = []int{4 << 10, 64 << 10, 1 << 20}
	bwDepths  = []int{1, 4, 16}
	latSizes  = []int{8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20}
	bwKernels = []string{"Write", "Read"}
)

// sizeName names a message size as the benchmarks do: 8B, 4KiB, 1MiB.
func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// bwEnv is a connected pair with a 16 MiB source and a 16 MiB remote
// destination, whose client SQ and CQ hold bwMaxQD outstanding requests.
type bwEnv struct{ *benchEnv }

// newBWEnv sets the pair up, failing tb on an error; owner (the
// top-level benchmark) closes it when it ends.
func newBWEnv(tb, owner testing.TB) *bwEnv {
	tb.Helper()
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.CQSize = bwMaxQD, bwMaxQD
	env := newBenchPair(tb, owner, bwRegion, cfg)
	env.wcs = make([]cq.WC, bwMaxQD)
	return &bwEnv{env}
}

// skipUnlessNamed skips b unless the -test.bench pattern names it (holds
// word): these benchmarks move megabytes per iteration, so a run meant for
// the small operations (scripts/bench.sh: -test.bench . -test.benchtime
// 1000x) must not spend minutes on them. scripts/bench-bw.sh names them.
func skipUnlessNamed(b *testing.B, word string) {
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), word) {
		b.Skipf("run only when -test.bench names it (contains %q): scripts/bench-bw.sh", word)
	}
}

// lazyBWEnv sets up the pair of the top-level benchmark b on the first
// sub-benchmark that runs: a run whose -bench pattern selects none of b's
// sub-benchmarks (scripts/bench-bw.sh runs one per request count) then
// costs no connection and no 32 MiB registration.
func lazyBWEnv(b *testing.B) func(sub *testing.B) *bwEnv {
	var env *bwEnv
	return func(sub *testing.B) *bwEnv {
		if env == nil {
			env = newBWEnv(sub, b)
		}
		return env
	}
}

// post posts request i of kernel (Write or Read) of size bytes, signaled.
// Request i uses slot i mod (16 MiB / size) of each region, so that
// outstanding requests never overlap.
func (b *bwEnv) post(tb testing.TB, read bool, size, i int) {
	off := i % (bwRegion / size) * size
	var err error
	if read {
		err = b.client.Read(b.src, off, b.rdst, off, size, rpma.CompletionAlways, uint64(i))
	} else {
		err = b.client.Write(b.rdst, off, b.src, off, size, rpma.CompletionAlways, uint64(i))
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// reap busy-polls the client's CQ once it has something and returns how
// many requests completed (at least 1).
func (b *bwEnv) reap(tb testing.TB) int {
	for {
		got, err := b.client.CQ().GetWC(b.wcs)
		if err != nil {
			if errors.Is(err, rpma.ErrNoCompletion) {
				continue
			}
			tb.Fatal(err)
		}
		for _, wc := range b.wcs[:got] {
			if wc.Status != rpma.WCSuccess {
				tb.Fatal(wc.Err())
			}
		}
		if got > 0 {
			return got
		}
	}
}

// run does n requests with up to qd outstanding: it fills the queue,
// then posts one request for each one that completes, and drains at the
// end, so that b.N requests are timed, each completed.
func (b *bwEnv) run(tb testing.TB, read bool, size, qd, n int) {
	posted, done := 0, 0
	for done < n {
		for posted < n && posted-done < qd {
			b.post(tb, read, size, posted)
			posted++
		}
		done += b.reap(tb)
	}
}

// BenchmarkBandwidth: writes and reads of 4 KiB, 64 KiB and 1 MiB with 1,
// 4 or 16 requests outstanding, each signaled and its completion
// busy-polled; MB/s is size × requests / time. Run in the VM:
// scripts/bench-bw.sh, or -test.bench Bandwidth (a pattern that does not
// name it, such as ".", skips it).
func BenchmarkBandwidth(b *testing.B) {
	skipUnlessNamed(b, "Bandwidth")
	get := lazyBWEnv(b)
	for _, k := range bwKernels {
		for _, size := range bwSizes {
			for _, qd := range bwDepths {
				b.Run(fmt.Sprintf("%s/%s/QD%d", k, sizeName(size), qd), func(b *testing.B) {
					env := get(b)
					b.ReportAllocs()
					b.SetBytes(int64(size))
					b.ResetTimer()
					env.run(b, k == "Read", size, qd, b.N)
				})
			}
		}
	}
}

// BenchmarkLatencySize: one write or read at a time (queue depth 1,
// signaled, busy-polled) from 8 B to 1 MiB; ns/op is the latency, with
// the median and 99th percentile of per-request tsc.Read stamps (as
// BenchmarkOpsStamped; rpma_bw.c stamps the same way). Like
// BenchmarkBandwidth, it runs only when -test.bench names it.
func BenchmarkLatencySize(b *testing.B) {
	skipUnlessNamed(b, "LatencySize")
	get := lazyBWEnv(b)
	for _, k := range bwKernels {
		for _, size := range latSizes {
			b.Run(fmt.Sprintf("%s/%s", k, sizeName(size)), func(b *testing.B) {
				env := get(b)
				b.ReportAllocs()
				b.SetBytes(int64(size))
				var lat latencies
				lat.clock.Start()
				last := tsc.Read()
				for i := 0; b.Loop(); i++ {
					env.post(b, k == "Read", size, i)
					env.reap(b)
					now := tsc.Read()
					lat.add(now - last)
					last = now
				}
				lat.clock.Stop()
				lat.report(b)
			})
		}
	}
}
