// Command testsummary reads `go test -json` on stdin, prints the tests'
// output as `go test -v` would, and ends with one line
//
//	TIER: N passed, M failed, K skipped
//
// It exits non-zero when a test or a package failed, when fewer than -min
// tests passed, or (with -no-skips) when any test was skipped: in the VM
// tier a skip means RDMA was missing, which must never pass silently.
// With -tally FILE it appends the counts and the failed names to FILE; with
// -total FILE it only prints the failed names and the sum of a tally file.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	tier := flag.String("tier", "tests", "name printed before the counts")
	noSkips := flag.Bool("no-skips", false, "fail when a test was skipped")
	min := flag.Int("min", 1, "fail when fewer tests passed")
	tally := flag.String("tally", "", "append the counts to this file")
	total := flag.String("total", "", "print the sum of this tally file and exit")
	flag.Parse()
	if *total != "" {
		os.Exit(printTotal(*total))
	}

	var passed, failed, skipped int
	var skippedNames, failedNames []string
	pkgFailed := map[string]bool{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Println(sc.Text()) // build errors and such are not JSON
			continue
		}
		switch e.Action {
		case "output":
			fmt.Print(e.Output)
		case "pass":
			if e.Test != "" {
				passed++
			}
		case "fail":
			if e.Test != "" {
				failed++
				failedNames = append(failedNames, e.Package+"."+e.Test)
			} else {
				pkgFailed[e.Package] = true
			}
		case "skip":
			if e.Test != "" {
				skipped++
				skippedNames = append(skippedNames, e.Package+"."+e.Test)
			}
		}
	}
	bad := false
	if len(failedNames) > 0 {
		fmt.Printf("%s: failed tests:\n", *tier)
		for _, n := range failedNames {
			fmt.Printf("  %s\n", n)
		}
		bad = true
	}
	var pkgs []string
	for p := range pkgFailed {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Printf("%s: package failed: %s\n", *tier, p)
		bad = true
	}
	if *noSkips && skipped > 0 {
		fmt.Printf("%s: skipped tests are not allowed in this tier:\n", *tier)
		for _, n := range skippedNames {
			fmt.Printf("  %s\n", n)
		}
		bad = true
	}
	if passed < *min {
		fmt.Printf("%s: only %d tests passed, want at least %d\n", *tier, passed, *min)
		bad = true
	}
	if *tally != "" {
		if f, err := os.OpenFile(*tally, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%d %d %d\n", passed, failed+len(pkgs), skipped)
			for _, n := range failedNames {
				fmt.Fprintf(f, "failed %s: %s\n", *tier, n)
			}
			for _, p := range pkgs {
				fmt.Fprintf(f, "failed %s: package %s\n", *tier, p)
			}
			if *noSkips {
				for _, n := range skippedNames {
					fmt.Fprintf(f, "failed %s: skipped %s\n", *tier, n)
				}
			}
			f.Close()
		}
	}
	fmt.Printf("%s: %d passed, %d failed, %d skipped\n", *tier, passed, failed, skipped)
	if bad {
		os.Exit(1)
	}
}

func printTotal(path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	var p, fl, s int
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "failed ") {
			names = append(names, line)
			continue
		}
		var a, b, c int
		if _, err := fmt.Sscan(line, &a, &b, &c); err == nil {
			p, fl, s = p+a, fl+b, s+c
		}
	}
	// Repeated here so that the last lines of a long log name what failed.
	for _, n := range names {
		fmt.Println(n)
	}
	fmt.Printf("total: %d passed, %d failed, %d skipped\n", p, fl, s)
	if fl > 0 {
		return 1
	}
	return 0
}
