package bench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteYield(t *testing.T) {
	parse := func(s string) Set { return mustParse(t, s) }
	r := Results{
		Go: parse("# round 1\nBenchmarkOps/Write64-2 1000 90 ns/op\nBenchmarkOpsStamped/Write64-2 1000 99 ns/op 50 p50-ns 300 p99-ns\nBenchmarkPostUnsignaled-2 1000 40 ns/op\n" +
			"# round 2\nBenchmarkOps/Write64-2 1000 80 ns/op\nBenchmarkOpsStamped/Write64-2 1000 99 ns/op 60 p50-ns 200 p99-ns\n"),
		NoYield: parse("# round 1\nBenchmarkOps/Write64-2 1000 100 ns/op\nBenchmarkOpsStamped/Write64-2 1000 99 ns/op 50 p50-ns 600 p99-ns\nBenchmarkPostUnsignaled-2 1000 50 ns/op\n" +
			"# round 2\nBenchmarkOps/Write64-2 1000 100 ns/op\nBenchmarkOpsStamped/Write64-2 1000 99 ns/op 50 p50-ns 400 p99-ns\n"),
	}
	var b bytes.Buffer
	r.WriteYield(&b)
	// Write64: means 0.9 and 0.8, p50 1.0 and 1.2, p99 0.5 and 0.5.
	require.Contains(t, b.String(), "| Write64 | 0.85 | 0.80-0.90 | 1.10 | 1.00-1.20 | 0.50 | 0.50-0.50 | 2 |")
	require.Contains(t, b.String(), "| PostUnsignaled | 0.80 | 0.80-0.80 | — | — | — | — | 1 |", "no stamped twin")
	require.NotContains(t, b.String(), "| Read64 |")

	b.Reset()
	Results{Go: r.Go, NoYield: Set{}}.WriteYield(&b)
	require.Empty(t, b.String(), "no go-noyield.txt, no table")
}
