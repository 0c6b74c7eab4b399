package bench_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/bench"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// TestRPMABWCompiles keeps the C bandwidth program building, warning-free,
// against the installed librpma.
func TestRPMABWCompiles(t *testing.T) {
	buildC(t, "rpma_bw")
}

// TestIntegrationRPMABW runs the C program with a tiny budget on a real
// device and checks that it prints every row the tables expect, with the
// iteration counts of its budget.
func TestIntegrationRPMABW(t *testing.T) {
	// 64 KiB: 16 requests of 4 KiB, 2 (the least) of 64 KiB and 1 MiB.
	out := runC(t, "rpma_bw", "-b", "65536", "-m", "2", "-M", "16", "-t", "170", "-p", "7298", rdmatest.IP(t))
	set, err := bench.ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	for _, name := range append(bench.BandwidthNames(), bench.LatencySizeNames()...) {
		require.Len(t, set[name], 1, name)
		s := set[name][0]
		size := 0
		for i, sz := range append(bench.LatSizes, "64KiB") {
			if strings.Contains(name, "/"+sz+"/") || strings.HasSuffix(name, "/"+sz) {
				size = append(bench.LatBytes, 64<<10)[i]
			}
		}
		require.NotZero(t, size, name)
		require.Equal(t, min(max(65536/size, 2), 16), s.Iters, name)
		require.Greater(t, s.Values["ns/op"], 0.0, name)
		require.Contains(t, s.Values, "MB/s", name)
		if strings.Contains(name, "LatencySize") {
			// MB/s has two decimals, as Go's testing prints it: 8 B
			// every 2.7 ms (a 6.12 run) reads 0.00.
			require.Greater(t, s.Values["p50-ns"], 0.0, name)
		} else {
			require.Greater(t, s.Values["MB/s"], 0.0, name)
		}
	}
}

// TestIntegrationRPMABWGoroutines runs the C program's goroutines mode,
// the baseline of conn's BenchmarkGoroutines at queue depth G, with 100
// requests a row, and checks every row: its name as the Go benchmark's
// rows (conn/bench_goroutines_linux_test.go), its count and its figures.
func TestIntegrationRPMABWGoroutines(t *testing.T) {
	out := runC(t, "rpma_bw", "-s", "goroutines", "-M", "100", "-t", "170", "-p", "7297", rdmatest.IP(t))
	set, err := bench.ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := 0
	for _, op := range []string{"Write64", "Read64", "WriteAndPersist64", "WriteAndPersist4K"} {
		for _, qd := range []int{1, 4, 16, 64} {
			name := fmt.Sprintf("BenchmarkGoroutines/C/%s/QD=%d", op, qd)
			require.Len(t, set[name], 1, name)
			s := set[name][0]
			require.Equal(t, 100, s.Iters, name)
			require.Greater(t, s.Values["ns/op"], 0.0, name)
			require.Greater(t, s.Values["p50-ns"], 0.0, name)
			require.GreaterOrEqual(t, s.Values["p999-ns"], s.Values["p50-ns"], name)
			rows++
		}
	}
	require.Len(t, set, rows, "rows the test does not know")
}

// TestBWNamesMatchGo: the C program and the tables know the Go
// benchmarks' parameters (conn/bench_bw_linux_test.go), so that a size
// added on one side cannot go missing from the comparison.
func TestBWNamesMatchGo(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "conn", "bench_bw_linux_test.go"))
	require.NoError(t, err)
	list := func(name string) string {
		m := regexp.MustCompile(name + `\s*=\s*\[\][a-z]+\{([^}]*)\}`).FindSubmatch(src)
		require.NotNil(t, m, name)
		return strings.Join(strings.Fields(string(m[1])), " ")
	}
	sizes := func(b []int) string {
		var s []string
		for _, n := range b {
			switch {
			case n >= 1<<20:
				s = append(s, fmt.Sprintf("%d << 20", n>>20))
			case n >= 1<<10:
				s = append(s, fmt.Sprintf("%d << 10", n>>10))
			default:
				s = append(s, fmt.Sprint(n))
			}
		}
		return strings.Join(s, ", ")
	}
	require.Equal(t, sizes(bench.LatBytes), list("latSizes"))
	require.Equal(t, sizes([]int{4 << 10, 64 << 10, 1 << 20}), list("bwSizes"))
	require.Equal(t, "1, 4, 16", list("bwDepths"))
	require.Equal(t, `"Write", "Read"`, list("bwKernels"))
	require.Equal(t, []string{"Write", "Read"}, bench.BWKernels)
	require.Equal(t, []int{1, 4, 16}, bench.BWDepths)
	require.Equal(t, []string{"4KiB", "64KiB", "1MiB"}, bench.BWSizes)
}

func writeRound(t *testing.T, dir, side string, n int, lines ...string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.txt", side, n)),
		[]byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func TestCompareBW(t *testing.T) {
	dir := t.TempDir()
	const w4 = "BenchmarkBandwidth/Write/4KiB/QD1"
	// Go: 10, 20, 40 MB/s; C: 20, 20, 20: ratios 0.5, 1, 2.
	for i, g := range []float64{10, 20, 40} {
		writeRound(t, dir, "go", i+1, "goos: linux",
			fmt.Sprintf("%s-2  100  1000 ns/op  %g MB/s  0 B/op  0 allocs/op", w4, g),
			"BenchmarkLatencySize/Write/8B-2  100  30000 ns/op  0.27 MB/s  25000 p50-ns  90000 p99-ns  0 B/op  0 allocs/op",
			"PASS")
		writeRound(t, dir, "c", i+1, "# rpma_bw: kernel 6.1",
			fmt.Sprintf("%s\t100\t1000 ns/op\t20 MB/s", w4),
			"BenchmarkLatencySize/Write/8B\t100\t20000 ns/op\t0.4 MB/s\t20000 p50-ns\t80000 p99-ns")
	}
	writeRound(t, dir, "go", 4, "BenchmarkBandwidth/Write/4KiB/QD1-2 100 1000 ns/op 99 MB/s") // unpaired
	require.NoError(t, os.WriteFile(filepath.Join(dir, "meta.txt"), []byte("x\n"), 0o644))

	rounds, err := bench.LoadRounds(dir)
	require.NoError(t, err)
	require.Len(t, rounds, 4)
	require.Equal(t, 4, rounds[3].N)
	require.Nil(t, rounds[3].C)

	rows := bench.CompareBW(rounds, []string{w4, "BenchmarkBandwidth/Read/1MiB/QD16"}, "MB/s")
	require.Len(t, rows, 2)
	r := rows[0]
	require.Equal(t, "Bandwidth/Write/4KiB/QD1", r.Name)
	require.Equal(t, 3, r.Pairs)
	require.Equal(t, 4, r.GoRuns)
	require.Equal(t, 30.0, r.GoMed) // 10 20 40 99
	require.Equal(t, 20.0, r.CMed)
	require.Equal(t, 1.0, r.Ratio)
	require.Equal(t, 0.5, r.RatioLo)
	require.Equal(t, 2.0, r.RatioHi)
	require.Equal(t, 100, r.GoIters)
	require.True(t, math.IsNaN(rows[1].Ratio))
	require.Zero(t, rows[1].Pairs)

	var buf bytes.Buffer
	bench.WriteBWTables(&buf, rounds)
	out := buf.String()
	t.Log(out)
	require.Contains(t, out, "| Bandwidth/Write/4KiB/QD1 | 100 | 30.0 | 20.0 | 1.00 | 0.50–2.00 |")
	require.Contains(t, out, "| LatencySize/Write/8B | 100 | 30.0 | 20.0 | 25.0 | 20.0 | 1.50 | 1.50–1.50 |")
	require.Contains(t, out, "| Bandwidth/Read/1MiB/QD16 | 0 | — | — | — | — |")

	miss := bench.MissingBW(rounds)
	require.Contains(t, miss, "Go: BenchmarkBandwidth/Read/1MiB/QD16")
	require.NotContains(t, miss, "Go: "+w4)
	require.NotContains(t, miss, "C: BenchmarkLatencySize/Write/8B")
}
