package bench

import (
	"fmt"
	"io"
)

// WriteYield writes the table of what the data path's yield does
// (internal/core/yield.go): per operation, Go as it is over Go without
// the yield (RPMA_BENCH_YIELD=0), as medians of the per-round ratios of
// the means, the per-operation medians and the 99th percentiles, with
// their spreads. Without go-noyield.txt it writes nothing.
func (r Results) WriteYield(w io.Writer) {
	if len(r.NoYield) == 0 {
		return
	}
	fmt.Fprintln(w, "| operation | mean: with / without the yield | spread | p50: with / without | spread | p99: with / without | spread | rounds |")
	fmt.Fprintln(w, "|---|---:|---|---:|---|---:|---|---:|")
	for _, row := range Rows {
		mean := Paired(r.Go, row.Go, r.NoYield, row.Go, "ns/op")
		if mean.N == 0 {
			continue
		}
		p50, p99 := ratioOf(nil), ratioOf(nil)
		if st := row.Stamped(); st != "" {
			p50 = Paired(r.Go, st, r.NoYield, st, "p50-ns")
			p99 = Paired(r.Go, st, r.NoYield, st, "p99-ns")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", shortName(row.Go),
			fmtRatio(mean.Median, 1), fmtSpread(mean), fmtRatio(p50.Median, 1), fmtSpread(p50),
			fmtRatio(p99.Median, 1), fmtSpread(p99), mean.N)
	}
}
