package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeRound(t *testing.T, dir string, r int, files map[string]string) {
	t.Helper()
	d := filepath.Join(dir, "round-"+string(rune('0'+r)))
	require.NoError(t, os.MkdirAll(d, 0o755))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(text), 0o644))
	}
}

func TestPaired(t *testing.T) {
	dir := t.TempDir()
	const reapLog = "    bench_remote_linux_test.go:88: reap: 7200 posts, 300 reaped, 2 found a completion (reaping on: true)\n"
	writeRound(t, dir, 1, map[string]string{
		PairedGoReap:   "BenchmarkOps/Write64-2 \t 1000\t 100000 ns/op\t 0 B/op\n" + reapLog,
		PairedGoNoReap: "BenchmarkOps/Write64-2 \t 1000\t 100000 ns/op\n",
		PairedC:        "BenchmarkOps/Write64\t 1000\t 50000 ns/op\t 40000 p50-ns\t 90000 p99-ns\nBenchmarkOps/WriteThenFlush64\t 1000\t 60000 ns/op\n",
	})
	writeRound(t, dir, 2, map[string]string{
		PairedGoReap:   "BenchmarkOps/Write64-2 \t 1000\t 300000 ns/op\nBenchmarkOps/WriteAndFlush64-2 \t 1000\t 120000 ns/op\n" + reapLog,
		PairedGoNoReap: "BenchmarkOps/Write64-2 \t 1000\t 200000 ns/op\n",
		PairedC:        "BenchmarkOps/Write64\t 1000\t 100000 ns/op\nBenchmarkOps/WriteThenFlush64\t 1000\t 60000 ns/op\n",
	})
	writeRound(t, dir, 3, map[string]string{ // only the C run survived
		PairedC: "BenchmarkOps/Write64\t 1000\t 1 ns/op\n",
	})
	rounds, err := LoadPaired(dir)
	require.NoError(t, err)
	require.Len(t, rounds, 3)
	require.Equal(t, ReapCount{Posts: 7200, Reaps: 300, Hits: 2}, rounds[0].Reap)

	rows := Paired(rounds)
	require.Len(t, rows, len(PairedRows))
	w := rows[0]
	require.Equal(t, "BenchmarkOps/Write64", w.Go)
	// Go/C per round: 2 and 3; reap on/off: 1 and 1.5. Round 3 pairs nothing.
	require.Equal(t, Spread{Median: 2.5, Min: 2, Max: 3, N: 2}, w.GoOverC)
	require.Equal(t, Spread{Median: 1.25, Min: 1, Max: 1.5, N: 2}, w.ReapOverNoReap)
	require.Equal(t, 3, w.C.N)
	waf := rows[4]
	require.Equal(t, "BenchmarkOps/WriteAndFlush64", waf.Go)
	require.Equal(t, Spread{Median: 2, Min: 2, Max: 2, N: 1}, waf.GoOverC)
	require.Zero(t, waf.ReapOverNoReap.N)
	require.True(t, math.IsNaN(waf.GoNoReap.Median))

	var b bytes.Buffer
	WritePaired(&b, rounds)
	out := b.String()
	require.Contains(t, out, "| Ops/Write64 | 200000 | 150000 | 50000 | 2.500 (2.000-3.000) | 1.250 (1.000-1.500) | 2/3 |")
	require.Contains(t, out, "14400 posts, 600 reaped, 4 reaps found a completion")
	require.Equal(t, len(PairedRows)+2, strings.Count("\n"+out, "\n|"), "header, rule and rows")
}

// TestPairedRowsMatchRPMALat: every C name of the two-node table is an
// operation rpma_lat -c prints.
func TestPairedRowsMatchRPMALat(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "rpma_lat.c"))
	require.NoError(t, err)
	for _, r := range PairedRows {
		require.Contains(t, string(src), `"`+r.C+`"`, r.C)
	}
}
