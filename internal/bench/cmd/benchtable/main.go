// Command benchtable prints the side-by-side latency tables of one
// scripts/bench.sh run (one kernel) as Markdown:
//
//	benchtable DIR
//	benchtable -runs
//
// With -runs it prints the perftest runs the table expects instead, one
// a line: the key, then the command (scripts/bench.sh runs them). DIR holds go.txt, c.txt, perftest-KEY.txt and meta.txt (see package
// internal/bench). The exit status is 1 when a figure is missing (a run
// failed or timed out): the tables are still printed, with "—" for it.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gorpma/rpma/internal/bench"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchtable DIR | benchtable -runs")
		os.Exit(2)
	}
	if os.Args[1] == "-runs" {
		for _, p := range bench.PerftestRuns {
			fmt.Println(p.Key, p.Cmd)
		}
		return
	}
	dir := os.Args[1]
	r := bench.Load(dir)
	for _, l := range metaLines(dir) {
		fmt.Println("- " + l)
	}
	goRuns, cRuns := r.Runs()
	fmt.Printf("- Go and librpma ns/op: median over rounds (Go %d, librpma %d) of each round's mean; Go/librpma: median of the rounds' ratios, and their spread (smallest-largest); perftest: the mean (t_avg) of one run\n", goRuns, cRuns)
	fmt.Println()
	r.WriteMeans(os.Stdout)
	fmt.Println()
	fmt.Println("\\* perftest's ping-pong tests report half a round trip; the Go and librpma rows wait for their own completion.")
	fmt.Println()
	r.WriteMedians(os.Stdout)
	fmt.Println()
	r.WriteFloors(os.Stdout)
	fmt.Println()
	r.WriteYield(os.Stdout)
	if m := r.Missing(); len(m) > 0 {
		fmt.Println()
		fmt.Println("missing: " + strings.Join(m, ", "))
		os.Exit(1)
	}
}

// metaLines returns the lines of DIR/meta.txt, and rpma_lat's comment
// lines about the atomic write and the clock.
func metaLines(dir string) []string {
	var out []string
	for _, name := range []string{"meta.txt", "c.txt"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		seen := map[string]bool{}
		for sc.Scan() {
			l := strings.TrimSpace(sc.Text())
			if name == "c.txt" {
				if !strings.HasPrefix(l, "# atomic write") {
					continue
				}
				l = "librpma: " + strings.TrimPrefix(l, "# ")
			}
			if l != "" && !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
		f.Close()
	}
	return out
}
