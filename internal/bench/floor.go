package bench

import (
	"fmt"
	"io"
	"math"
)

// CrossingBench is the Go benchmark of one bare crossing into C and back
// (conn's BenchmarkCrossing).
const CrossingBench = "BenchmarkCrossing"

// Floor splits a row's Go/librpma ratio in two, round by round: what the
// crossings alone would make it (Floor: librpma's time plus the Go
// benchmark's crossings per operation times round's bare crossing, over
// librpma's time), and what the rest of the Go side adds on top of that
// (Beyond: Go's time over the same sum). Floor times Beyond is the ratio.
type Floor struct {
	Crossings     float64 // crossings per operation, median over the rounds
	Floor, Beyond Ratio
}

// FloorOf computes row's Floor from the Go and librpma outputs (Go's must
// hold its crossings/op metric and BenchmarkCrossing in the same rounds).
func (r Results) FloorOf(row Row) Floor {
	cross := r.Go.byRound(CrossingBench, "ns/op")
	c := r.C.byRound(row.C, "ns/op")
	var floors, beyond, per []float64
	for i, smp := range r.Go[row.Go] {
		g, ok := smp.Values["ns/op"]
		x, counted := smp.Values["crossings/op"]
		round := roundOf(smp, i)
		ns, crossed := cross[round]
		cns, paired := c[round]
		if !ok || !counted || !crossed || !paired {
			continue
		}
		sum := cns + x*ns
		floors = append(floors, sum/cns)
		beyond = append(beyond, g/sum)
		per = append(per, x)
	}
	f := Floor{Crossings: math.NaN(), Floor: ratioOf(floors), Beyond: ratioOf(beyond)}
	if len(per) > 0 {
		f.Crossings = median(per)
	}
	return f
}

// WriteFloors writes the table that splits each busy-polled row's
// Go/librpma ratio into the crossings' part and the rest (Floor), after a
// line with the bare crossing's time. Rows without a crossings count
// (outputs from before it was reported) are left out.
func (r Results) WriteFloors(w io.Writer) {
	x, n := r.Go.Median(CrossingBench, "ns/op")
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "One bare crossing into C and back (BenchmarkCrossing): %s ns, median of %d rounds.\n\n", fmtNs(x), n)
	fmt.Fprintln(w, "| operation | crossings/op | (librpma + crossings) / librpma | spread | Go / (librpma + crossings) | spread |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---|")
	for _, row := range Rows {
		f := r.FloorOf(row)
		if f.Floor.N == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f | %s | %s | %s | %s |\n", shortName(row.Go), f.Crossings,
			fmtRatio(f.Floor.Median, 1), fmtSpread(f.Floor), fmtRatio(f.Beyond.Median, 1), fmtSpread(f.Beyond))
	}
}
