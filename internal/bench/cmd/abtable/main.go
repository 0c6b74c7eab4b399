// Command abtable prints the table of an A/B run of scripts/bench-ab.sh
// from its outputs in DIR (a.txt, b.txt, c.txt): per operation, the
// change (B) over the base (A) and each over librpma, as medians of
// per-round ratios (bench.AB). It exits 1 when no operation was measured
// by both builds.
//
//	abtable DIR
package main

import (
	"fmt"
	"os"

	"github.com/gorpma/rpma/internal/bench"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: abtable DIR")
		os.Exit(2)
	}
	ab, err := bench.LoadAB(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "abtable:", err)
		os.Exit(1)
	}
	if ab.Write(os.Stdout) == 0 {
		fmt.Fprintln(os.Stderr, "abtable: no operation measured by both builds")
		os.Exit(1)
	}
}
