package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFloor(t *testing.T) {
	parse := func(s string) Set { return mustParse(t, s) }
	r := Results{
		// Round 1: C 100, crossing 10, Go 130 with 2 crossings: floor
		// (100+20)/100, beyond 130/120. Round 2: C 200, crossing 20, Go
		// 300 with 1: floor 220/200, beyond 300/220. Round 3 has no C.
		Go: parse("# round 1\nBenchmarkOps/Write64-2 1000 130 ns/op 2.00 crossings/op\nBenchmarkCrossing-2 1000 10 ns/op\n" +
			"# round 2\nBenchmarkOps/Write64-2 1000 300 ns/op 1.00 crossings/op\nBenchmarkCrossing-2 1000 20 ns/op\n" +
			"# round 3\nBenchmarkOps/Write64-2 1000 999 ns/op 1.00 crossings/op\nBenchmarkCrossing-2 1000 5 ns/op\n"),
		C: parse("# round 1\nBenchmarkOps/Write64 1000 100 ns/op\n# round 2\nBenchmarkOps/Write64 1000 200 ns/op\n"),
	}
	f := r.FloorOf(Rows[0])
	require.Equal(t, 2, f.Floor.N)
	require.InDelta(t, 1.5, f.Crossings, 1e-9)
	require.InDelta(t, 1.15, f.Floor.Median, 1e-9)
	require.InDelta(t, 1.10, f.Floor.Lo, 1e-9)
	require.InDelta(t, (130.0/120+300.0/220)/2, f.Beyond.Median, 1e-9)

	var b bytes.Buffer
	r.WriteFloors(&b)
	require.Contains(t, b.String(), "One bare crossing into C and back (BenchmarkCrossing): 10 ns, median of 3 rounds.")
	require.Contains(t, b.String(), "| Write64 | 1.50 | 1.15 | 1.10-1.20 | 1.22 | 1.08-1.36 |")
	require.NotContains(t, b.String(), "| Read64 |", "no figures, no row")

	// Outputs from before the crossing was measured: no table at all.
	b.Reset()
	Results{Go: parse("BenchmarkOps/Write64-2 1000 130 ns/op\n"), C: r.C}.WriteFloors(&b)
	require.Empty(t, b.String())
}

// mustParse parses benchmark output for a test.
func mustParse(t *testing.T, out string) Set {
	t.Helper()
	set, err := ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	return set
}
