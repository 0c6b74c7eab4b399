package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/bench"
	"github.com/gorpma/rpma/internal/cbuild"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// ccFlags are the flags the bench scripts build their C programs with.
var ccFlags = []string{"-O2", "-Wall", "-Wextra", "-Werror"}

// The builds of the C programs are shared by the tests of this binary:
// under TCG one compilation takes tens of seconds.
var cBuilds struct {
	sync.Mutex
	dir   string
	once  map[string]*sync.Once
	bin   map[string]string
	skip  string // why no build can be tried
	err   map[string]error
	probe sync.Once
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cBuilds.dir != "" {
		os.RemoveAll(cBuilds.dir)
	}
	os.Exit(code)
}

// buildC compiles testdata/NAME.c against librpma with ccFlags (once per
// test binary, or not at all when the cache of C builds, internal/cbuild,
// has it), or skips the test when there is no C compiler or no
// librpma.h, and returns the program's path.
func buildC(t testing.TB, name string) string {
	t.Helper()
	cBuilds.Lock()
	if cBuilds.once == nil {
		cBuilds.once, cBuilds.bin, cBuilds.err = map[string]*sync.Once{}, map[string]string{}, map[string]error{}
	}
	once := cBuilds.once[name]
	if once == nil {
		once = new(sync.Once)
		cBuilds.once[name] = once
	}
	cBuilds.Unlock()
	cBuilds.probe.Do(func() {
		cc, err := exec.LookPath("cc")
		if err != nil {
			cBuilds.skip = "no C compiler (cc) on PATH: scripts/setup.sh installs gcc"
			return
		}
		probe := exec.Command(cc, "-E", "-x", "c", "-o", os.DevNull, "-")
		probe.Stdin = strings.NewReader("#include <librpma.h>\n")
		if out, err := probe.CombinedOutput(); err != nil {
			cBuilds.skip = fmt.Sprintf("librpma.h not found (scripts/setup.sh installs librpma-dev): %v\n%s", err, out)
			return
		}
		cBuilds.dir, err = os.MkdirTemp("", "rpma-bench-c")
		if err != nil {
			cBuilds.skip = err.Error()
		}
	})
	if cBuilds.skip != "" {
		t.Skip(cBuilds.skip)
	}
	once.Do(func() {
		bin, _, err := cbuild.Build(context.Background(), "cc", cbuild.Program{
			Name: name, Dir: "testdata", Srcs: []string{name + ".c"}, Args: ccFlags, Libs: []string{"-lrpma"},
		}, cBuilds.dir)
		cBuilds.Lock()
		cBuilds.bin[name], cBuilds.err[name] = bin, err
		cBuilds.Unlock()
	})
	cBuilds.Lock()
	defer cBuilds.Unlock()
	require.NoError(t, cBuilds.err[name])
	return cBuilds.bin[name]
}

// runC builds testdata/NAME.c, runs it with args on the device (within 3
// minutes), fails the test on a non-zero exit with its stderr, logs its
// output and returns it.
func runC(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin := buildC(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
	out := stdout.String()
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
	return out
}

// TestRPMALatCompiles keeps the C program building, warning-free, against
// the installed librpma.
func TestRPMALatCompiles(t *testing.T) {
	buildC(t, "rpma_lat")
}

// TestIntegrationRPMALat runs the C program briefly on a real device and
// checks that it prints every operation of the table.
func TestIntegrationRPMALat(t *testing.T) {
	out := runC(t, "rpma_lat", "-n", "10", "-w", "2", "-t", "170", "-p", "7299", rdmatest.IP(t))
	require.Contains(t, out, "# atomic write: ")
	set, err := bench.ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	for _, row := range bench.Rows {
		require.Len(t, set[row.C], 1, row.C)
		s := set[row.C][0]
		require.Equal(t, 10, s.Iters, row.C)
		for _, unit := range []string{"ns/op", "p50-ns", "p99-ns"} {
			require.Greater(t, s.Values[unit], 0.0, "%s %s", row.C, unit)
		}
	}
}

// TestRowsMatchGoBenchmarks: every sub-benchmark of conn's BenchmarkOps
// has its row, so a new operation cannot be left out of the comparison.
func TestRowsMatchGoBenchmarks(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "conn", "bench_linux_test.go"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)var benchRows = \[\]string\{([^}]*)\}`).FindSubmatch(src)
	require.NotNil(t, m, "the list of sub-benchmarks in BenchmarkOps")
	require.Contains(t, string(src), "func BenchmarkOpsStamped(")
	require.Contains(t, string(src), "func "+bench.CrossingBench+"(", "the floor table's bare crossing")
	require.Contains(t, string(src), `"crossings/op"`, "the floor table's crossings per operation")
	var want []string
	for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(m[1], -1) {
		want = append(want, "BenchmarkOps/"+string(q[1]))
	}
	require.Contains(t, string(src), "func BenchmarkPostUnsignaled(")
	want = append(want, "BenchmarkPostUnsignaled")
	var got []string
	for _, r := range bench.Rows {
		got = append(got, r.Go)
	}
	require.ElementsMatch(t, want, got)

	keys := map[string]bool{}
	for _, p := range bench.PerftestRuns {
		keys[p.Key] = true
	}
	for _, r := range bench.Rows {
		if r.Perftest != "" {
			require.True(t, keys[r.Perftest], "row %s: perftest run %q", r.Go, r.Perftest)
		}
	}
	for k := range bench.HalfRTT {
		require.True(t, keys[k], "HalfRTT %q", k)
	}
}

const goOutput = `goos: linux
goarch: amd64
pkg: github.com/gorpma/rpma/conn
cpu: QEMU TCG CPU version 2.5+
# round 1
BenchmarkOps/Write64-2      	    2000	    574600 ns/op	       0 B/op	       0 allocs/op
BenchmarkOps/Read64-2       	    2000	    280436 ns/op	       0 B/op	       0 allocs/op
BenchmarkPostUnsignaled-2               	    2000	     67882 ns/op	       0 B/op	       0 allocs/op
BenchmarkOpsStamped/Write64-2      	    2000	    575000 ns/op	     21000 p50-ns	    900000 p99-ns
PASS
# round 2
BenchmarkOps/Write64-2      	    2000	    500000 ns/op	       0 B/op	       0 allocs/op
# round 3
BenchmarkOps/Write64-2      	    2000	    600000 ns/op	       0 B/op	       0 allocs/op
BenchmarkOps/Broken-2      	    2000	    x ns/op
`

const cOutput = `# round 1
# rpma_lat: kernel 6.12.117+deb12-amd64, 2000 iterations after 100 warm-up
# atomic write: native; flush: emulated (librpma 1.2.0 has no native flush)
BenchmarkOps/Write64	    2000	     2991367 ns/op	     42093 p50-ns	  27546846 p99-ns
BenchmarkOps/WriteThenFlush64	    2000	     1044669 ns/op	     70725 p50-ns	  15235759 p99-ns
`

const perftestOutput = `---------------------------------------------------------------------------------------
                    RDMA_Read Latency Test
 Dual-port       : OFF		Device         : rxe0
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 64      1000          37.77          12762.42      39.78    	       717.84      	1721.31		8163.08 		12762.42
---------------------------------------------------------------------------------------
`

func TestParseBench(t *testing.T) {
	set, err := bench.ParseBench(strings.NewReader(goOutput))
	require.NoError(t, err)
	require.Len(t, set["BenchmarkOps/Write64"], 3)
	require.Equal(t, 2000, set["BenchmarkOps/Write64"][0].Iters)
	require.Equal(t, 0.0, set["BenchmarkOps/Write64"][0].Values["allocs/op"])
	require.NotContains(t, set, "BenchmarkOps/Broken")
	v, n := set.Median("BenchmarkOps/Write64", "ns/op")
	require.Equal(t, 574600.0, v)
	require.Equal(t, 3, n)
	require.Equal(t, 500000.0, set.Min("BenchmarkOps/Write64", "ns/op"))
	require.True(t, math.IsNaN(set.Min("BenchmarkOps/Flush", "ns/op")))
	v, n = set.Median("BenchmarkPostUnsignaled", "ns/op")
	require.Equal(t, 67882.0, v)
	require.Equal(t, 1, n)
	_, n = set.Median("BenchmarkOps/Flush", "ns/op")
	require.Zero(t, n)

	c, err := bench.ParseBench(strings.NewReader(cOutput))
	require.NoError(t, err)
	require.Equal(t, 42093.0, c["BenchmarkOps/Write64"][0].Values["p50-ns"])
	require.Equal(t, 15235759.0, c["BenchmarkOps/WriteThenFlush64"][0].Values["p99-ns"])
}

const perftestCycles = ` #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 64      500          51350.00        2420782.00      52390.00  	       59485.75     	-nan   		409110.00 		2420782.00
`

const perftestInf = ` #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 64      1000          inf            inf          inf      	       inf         	-nan   		inf     		inf    
`

func TestParsePerftest(t *testing.T) {
	p, err := bench.ParsePerftest(strings.NewReader(perftestOutput), 0)
	require.NoError(t, err)
	require.Equal(t, bench.Perftest{Bytes: 64, Iters: 1000, Min: 37770, Max: 12762420, Typical: 39780, Avg: 717840, P99: 8163080}, p)

	p, err = bench.ParsePerftest(strings.NewReader(perftestCycles), 2.5)
	require.NoError(t, err)
	require.Equal(t, bench.Perftest{Bytes: 64, Iters: 500, Min: 20540, Max: 968312.8, Typical: 20956, Avg: 23794.3, P99: 163644}, p)

	_, err = bench.ParsePerftest(strings.NewReader(perftestInf), 2.5)
	require.ErrorContains(t, err, "not a finite time")
	_, err = bench.ParsePerftest(strings.NewReader(" Unable to init the socket connection\n"), 0)
	require.Error(t, err)
}

func TestTables(t *testing.T) {
	g, err := bench.ParseBench(strings.NewReader(goOutput))
	require.NoError(t, err)
	c, err := bench.ParseBench(strings.NewReader(cOutput))
	require.NoError(t, err)
	r := bench.Results{Go: g, C: c, Perftest: map[string]bench.Perftest{"write64": {Avg: 287300, Typical: 30000, P99: 90000}}}
	var means, medians bytes.Buffer
	r.WriteMeans(&means)
	r.WriteMedians(&medians)
	// Go's median is over its three rounds; the ratio only over round 1,
	// the one librpma completed.
	require.Contains(t, means.String(), "| Write64 | 574600 | 2991367 | 0.19 | 0.19-0.19 | 1 | 287300 | 2.00 * |")
	require.Contains(t, means.String(), "| WriteAndFlush64 | — | 1044669 | — | — | 0 | — | — |")
	require.Contains(t, medians.String(), "| Write64 | 21000 | 42093 | 0.50 | 900000 | 27546846 | 30000 | 90000 |")
	require.NotContains(t, medians.String(), "| PostUnsignaled |", "no stamped run of the post alone")
	goRuns, cRuns := r.Runs()
	require.Equal(t, 1, goRuns)
	require.Equal(t, 1, cRuns)
	require.Contains(t, r.Missing(), "Go Flush")
	require.Contains(t, r.Missing(), "Go stamped Read64")
	require.NotContains(t, r.Missing(), "Go stamped Write64")
	require.Contains(t, r.Missing(), "perftest ib_read_lat -s 64")
	require.NotContains(t, r.Missing(), "librpma WriteAndFlush64")
}

// TestPaired pairs rounds by number: a round one program lacks is left
// out, and the ratio is the median of the per-round ratios, not the ratio
// of the medians.
func TestPaired(t *testing.T) {
	g, err := bench.ParseBench(strings.NewReader(`# round 1
BenchmarkOps/Write64-2 100 200 ns/op
# round 2
BenchmarkOps/Write64-2 100 300 ns/op
# round 3
BenchmarkOps/Write64-2 100 900 ns/op
# round 4
BenchmarkOps/Write64-2 100 100 ns/op
`))
	require.NoError(t, err)
	c, err := bench.ParseBench(strings.NewReader(`# round 1
BenchmarkOps/Write64 100 100 ns/op
# round 3
BenchmarkOps/Write64 100 1000 ns/op
# round 4
BenchmarkOps/Write64 100 50 ns/op
`))
	require.NoError(t, err)
	p := bench.Paired(g, "BenchmarkOps/Write64", c, "BenchmarkOps/Write64", "ns/op")
	require.Equal(t, bench.Ratio{Median: 2, Lo: 0.9, Hi: 2, N: 3}, p)
	require.Equal(t, 3, g["BenchmarkOps/Write64"][2].Round)

	// Without round lines, runs pair in order.
	a, _ := bench.ParseBench(strings.NewReader("BenchmarkX 1 30 ns/op\nBenchmarkX 1 40 ns/op\n"))
	b, _ := bench.ParseBench(strings.NewReader("BenchmarkX 1 10 ns/op\nBenchmarkX 1 20 ns/op\n"))
	require.Equal(t, bench.Ratio{Median: 2.5, Lo: 2, Hi: 3, N: 2}, bench.Paired(a, "BenchmarkX", b, "BenchmarkX", "ns/op"))
	require.True(t, math.IsNaN(bench.Paired(a, "BenchmarkY", b, "BenchmarkX", "ns/op").Median))
}
