package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAB: rounds pair by number (round 3, which C lacks, leaves only the
// ratios over librpma), B/A is the median of the per-round ratios, and an
// operation that one build lacks has no row.
func TestAB(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	write("a.txt", "# round 1\nBenchmarkOps/Write64-2 100 100 ns/op\nBenchmarkOps/Read64-2 100 50 ns/op\n"+
		"# round 2\nBenchmarkOps/Write64-2 100 200 ns/op\n"+
		"# round 3\nBenchmarkOps/Write64-2 100 100 ns/op\n")
	write("b.txt", "# round 3\nBenchmarkOps/Write64-2 100 120 ns/op\n"+
		"# round 1\nBenchmarkOps/Write64-2 100 90 ns/op\n"+
		"# round 2\nBenchmarkOps/Write64-2 100 160 ns/op\n")
	write("c.txt", "# round 1\nBenchmarkOps/Write64 100 50 ns/op\n# round 2\nBenchmarkOps/Write64 100 100 ns/op\n")
	ab, err := LoadAB(dir)
	require.NoError(t, err)
	rows := ab.Table()
	require.Len(t, rows, 1, "Read64 has no B: no row")
	r := rows[0]
	require.Equal(t, "BenchmarkOps/Write64", r.Row.Go)
	require.Equal(t, 3, r.BOverA.N)
	require.InDelta(t, 0.9, r.BOverA.Median, 1e-9, "ratios 1.2, 0.9, 0.8")
	require.InDelta(t, 0.8, r.BOverA.Lo, 1e-9)
	require.InDelta(t, 1.2, r.BOverA.Hi, 1e-9)
	require.Equal(t, 2, r.BFaster)
	require.Equal(t, 2, r.AOverC.N, "round 3 has no C")
	require.InDelta(t, 2.0, r.AOverC.Median, 1e-9)
	require.InDelta(t, 1.7, r.BOverC.Median, 1e-9, "1.8 and 1.6")

	var out strings.Builder
	require.Equal(t, 1, ab.Write(&out))
	require.Contains(t, out.String(), "| Write64 | 0.90 | 2 of 3 | 0.80-1.20 | 2.00 | 1.70 |")

	require.NoError(t, os.Remove(filepath.Join(dir, "c.txt")))
	_, err = LoadAB(dir)
	require.Error(t, err, "a missing output is an error")
}
