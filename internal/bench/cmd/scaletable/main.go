// Command scaletable prints the table of one scripts/bench-scale.sh run
// (one kernel) as Markdown:
//
//	scaletable DIR
//
// DIR holds go-R.txt and c-R.txt for rounds R = 1, 2, ... (the outputs of
// conn's BenchmarkScale and of testdata/rpma_scale.c). The exit status is
// 1 when a figure is missing from some round (a run failed or timed out):
// the table is still printed, from the rounds that have it.
package main

import (
	"fmt"
	"os"

	"github.com/gorpma/rpma/internal/bench"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: scaletable DIR")
		os.Exit(2)
	}
	rounds, err := bench.LoadRounds(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaletable:", err)
		os.Exit(1)
	}
	fmt.Printf("- %d rounds; ops/s: median over the rounds; ratio: median of each round's Go/C, spread: its min–max (rounds with both); KiB/conn: RSS growth per connection (both ends), median\n\n", len(rounds))
	if m := bench.WriteScaleTable(os.Stdout, rounds); len(m) > 0 || len(rounds) == 0 {
		fmt.Println()
		fmt.Println("missing: " + bench.ScaleMissing(m))
		os.Exit(1)
	}
}
