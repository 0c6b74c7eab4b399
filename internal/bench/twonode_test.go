package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeRound(t *testing.T, dir string, r int, files map[string]string) {
	t.Helper()
	d := filepath.Join(dir, "round-"+strconv.Itoa(r))
	require.NoError(t, os.MkdirAll(d, 0o755))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(text), 0o644))
	}
}

// TestTwoNode: ratios are taken within a round, a round one client lacks
// pairs nothing, and the reap counts add up over the rounds.
func TestTwoNode(t *testing.T) {
	dir := t.TempDir()
	const reapLog = "reap: 7200 posts, 300 reaped, 2 found a completion (BenchmarkOps, reaping on: true)\n"
	writeRound(t, dir, 1, map[string]string{
		TwoNodeGoReap:   "BenchmarkOps/Write64-2 \t 1000\t 100000 ns/op\t 0 B/op\n" + reapLog,
		TwoNodeGoNoReap: "BenchmarkOps/Write64-2 \t 1000\t 100000 ns/op\n",
		TwoNodeC:        "BenchmarkOps/Write64\t 1000\t 50000 ns/op\t 40000 p50-ns\t 90000 p99-ns\nBenchmarkOps/WriteThenFlush64\t 1000\t 60000 ns/op\n",
	})
	writeRound(t, dir, 2, map[string]string{
		TwoNodeGoReap:   "BenchmarkOps/Write64-2 \t 1000\t 300000 ns/op\nBenchmarkOps/WriteAndFlush64-2 \t 1000\t 120000 ns/op\n" + reapLog,
		TwoNodeGoNoReap: "BenchmarkOps/Write64-2 \t 1000\t 200000 ns/op\n",
		TwoNodeC:        "BenchmarkOps/Write64\t 1000\t 100000 ns/op\nBenchmarkOps/WriteThenFlush64\t 1000\t 60000 ns/op\n",
	})
	writeRound(t, dir, 10, map[string]string{ // only the C run survived
		TwoNodeC: "BenchmarkOps/Write64\t 1000\t 1 ns/op\n",
	})
	tn, err := LoadTwoNode(dir)
	require.NoError(t, err)
	require.Equal(t, 3, tn.Rounds)
	require.Equal(t, ReapCount{Posts: 14400, Reaps: 600, Hits: 4}, tn.Reap)
	require.Equal(t, 10, tn.C["BenchmarkOps/Write64"][2].Round)

	rows := tn.Table()
	require.Len(t, rows, len(TwoNodeRows))
	w := rows[0]
	require.Equal(t, "BenchmarkOps/Write64", w.Go)
	// Go/C per round: 2 and 3; reap on/off: 1 and 1.5. Round 10 pairs nothing.
	require.Equal(t, Ratio{Median: 2.5, Lo: 2, Hi: 3, N: 2}, w.GoOverC)
	require.Equal(t, Ratio{Median: 1.25, Lo: 1, Hi: 1.5, N: 2}, w.ReapOverNoReap)
	require.Equal(t, 50000.0, w.C)
	waf := rows[4]
	require.Equal(t, "BenchmarkOps/WriteAndFlush64", waf.Go)
	require.Equal(t, Ratio{Median: 2, Lo: 2, Hi: 2, N: 1}, waf.GoOverC)
	require.Zero(t, waf.ReapOverNoReap.N)
	require.True(t, math.IsNaN(waf.GoNoReap))

	var b bytes.Buffer
	tn.Write(&b)
	out := b.String()
	require.Contains(t, out, "| Write64 | 200000 | 150000 | 50000 | 2.50 | 2.00-3.00 | 1.25 | 1.00-1.50 | 2/3 |")
	require.Contains(t, out, "14400 posts, 600 reaped, 4 reaps found a completion")
	require.Equal(t, len(TwoNodeRows)+2, strings.Count("\n"+out, "\n|"), "header, rule and rows")
}

// TestTwoNodeRowsMatchRPMALat: every C name of the two-node table is an
// operation rpma_lat prints.
func TestTwoNodeRowsMatchRPMALat(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "rpma_lat.c"))
	require.NoError(t, err)
	for _, r := range TwoNodeRows {
		require.Contains(t, string(src), `"`+r.C+`"`, r.C)
	}
}
