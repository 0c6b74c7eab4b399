// Command pairtable prints the two-node table of scripts/bench-2node.sh
// from the rounds it collected in DIR (DIR/round-R/{go-reap,go-noreap,c}.txt):
// per operation, Go with reaping on and off and C librpma, and the
// medians of per-round ratios (bench.TwoNode). It exits 1 when a row lacks
// a ratio.
//
//	pairtable DIR
package main

import (
	"fmt"
	"os"

	"github.com/gorpma/rpma/internal/bench"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pairtable DIR")
		os.Exit(2)
	}
	tn, err := bench.LoadTwoNode(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pairtable:", err)
		os.Exit(1)
	}
	tn.Write(os.Stdout)
	status := 0
	for _, r := range tn.Table() {
		if r.GoOverC.N == 0 || r.ReapOverNoReap.N == 0 {
			fmt.Fprintf(os.Stderr, "pairtable: %s: no round with both figures\n", r.Go)
			status = 1
		}
	}
	os.Exit(status)
}
