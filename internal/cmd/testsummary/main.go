// Command testsummary reads `go test -json` on stdin, prints the tests'
// output as `go test -v` would, each line prefixed with the tier (which
// names the VM), the package and the tier's running count, as in
//
//	vm-6.12 conn (41 passed) | --- PASS: TestIntegrationWrite (1.23s)
//
// and ends with the tier's slowest tests and one line
//
//	TIER: N passed, M failed, K skipped
//
// It exits non-zero when a test or a package failed, when fewer than -min
// tests passed, or (with -no-skips) when any test was skipped: in the VM
// tier a skip means RDMA was missing, which must never pass silently.
// With -tally FILE it appends the counts and the failed names to FILE; with
// -total FILE it only prints the failed names and the sum of a tally file.
//
// The last lines of each failed test's output, followed by the reasons
// its assertions gave, are kept in FILE.failures and printed again by
// -total, just before the failed names: a CI log is often read from its
// end only, and a failure must say why there.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on pass and fail
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
	outputs := map[string]*tail{}
	var durations []timed
	log := &prefixer{w: os.Stdout, tier: *tier}
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
			log.write(e.Package, e.Output, passed, failed)
			k := e.Package + "." + e.Test
			if outputs[k] == nil {
				outputs[k] = &tail{}
			}
			outputs[k].add(e.Output)
		case "pass":
			if e.Test != "" {
				passed++
				durations = append(durations, timed{e.Package, e.Test, e.Elapsed})
			}
		case "fail":
			if e.Test != "" {
				failed++
				durations = append(durations, timed{e.Package, e.Test, e.Elapsed})
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
		writeFailures(*tally+".failures", *tier, failedNames, pkgs, outputs)
	}
	if line := slowest(durations, 8); line != "" {
		fmt.Printf("%s: slowest: %s\n", *tier, line)
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
	// Repeated here so that the last lines of a long log say what failed,
	// and why.
	if b, err := os.ReadFile(path + ".failures"); err == nil {
		os.Stdout.Write(b)
	}
	for _, n := range names {
		fmt.Println(n)
	}
	fmt.Printf("total: %d passed, %d failed, %d skipped\n", p, fl, s)
	if fl > 0 {
		return 1
	}
	return 0
}

// tailLines is how many of a failed test's last output lines -total
// repeats; maxFailures, for how many failed tests at most.
const (
	tailLines   = 30
	maxFailures = 8
)

// tail keeps the last tailLines lines written to it, and the reasons of
// the test's failed assertions (testify's "Error:" and "Messages:" and
// the lines that continue them), which a failed test's later output, such
// as a guest's dmesg printed by a cleanup, would push out of the tail.
type tail struct {
	lines []string
	why   []string
	inWhy bool // the last line was part of a reason
}

// whyLines is how many lines of reasons a tail keeps at most.
const whyLines = 24

func (t *tail) add(s string) {
	t.lines = append(t.lines, s)
	if len(t.lines) > 2*tailLines {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-tailLines:]...)
	}
	t.keepWhy(s)
}

// keepWhy keeps s if it is part of a failed assertion's reason. Testify
// writes a block of lines that begin with spaces and a tab: "Error
// Trace:" and its stack, "Error:", "Test:", "Messages:", each of the
// latter possibly continued on lines whose label is blank.
func (t *tail) keepWhy(s string) {
	body, isBlock := strings.CutPrefix(strings.TrimLeft(s, " "), "\t")
	if !isBlock {
		t.inWhy = false
		return
	}
	label, text, _ := strings.Cut(body, "\t")
	switch strings.TrimSpace(label) {
	case "Error:", "Messages:":
		t.inWhy = true
	case "":
		// continues the label before it, but for testify's diff,
		// which repeats what "Error:" said
		if strings.TrimSpace(text) == "Diff:" {
			t.inWhy = false
		}
	default: // "Error Trace:", "Test:"
		t.inWhy = false
	}
	if t.inWhy && len(t.why) < whyLines {
		t.why = append(t.why, s)
	}
}

func (t *tail) last() []string {
	return t.lines[max(0, len(t.lines)-tailLines):]
}

// writeFailures appends the output tails of the failed tests (the leaves
// only: a parent's output only repeats its subtests' verdicts) and of the
// failed packages to path.
func writeFailures(path, tier string, tests, pkgs []string, outputs map[string]*tail) {
	var names []string
	for _, n := range tests {
		leaf := true
		for _, m := range tests {
			if strings.HasPrefix(m, n+"/") {
				leaf = false
			}
		}
		if leaf {
			names = append(names, n)
		}
	}
	// A package's own tail (its FAIL line, the guest's dmesg) says why
	// only when no test of it failed: a crash, a timeout, a build error.
	// It goes first, so that the tests' tails end the log.
	var pkgNames []string
	for _, p := range pkgs {
		if !hasTestIn(names, p) {
			pkgNames = append(pkgNames, p+".")
		}
	}
	names = append(pkgNames, names...)
	if len(names) == 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	for i, n := range names {
		if i == maxFailures {
			fmt.Fprintf(f, "(%s: %d more failures, see above)\n", tier, len(names)-i)
			break
		}
		t := outputs[n]
		if t == nil {
			continue
		}
		fmt.Fprintf(f, "--- %s: the last lines of %s:\n", tier, strings.TrimSuffix(n, "."))
		for _, l := range t.last() {
			fmt.Fprint(f, "    ", l)
		}
		if len(t.why) > 0 {
			fmt.Fprintf(f, "--- %s: why %s failed:\n", tier, strings.TrimSuffix(n, "."))
			for _, l := range t.why {
				fmt.Fprint(f, "    ", l)
			}
		}
	}
}

// hasTestIn reports whether one of the names (package.Test) is a test of
// package pkg.
func hasTestIn(names []string, pkg string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, pkg+".") && len(n) > len(pkg)+1 {
			return true
		}
	}
	return false
}

// timed is one test's run time.
type timed struct {
	pkg, test string
	seconds   float64
}

// slowest names the n slowest top-level tests (subtests are inside their
// parent's time) with their seconds, slowest first: where a tier's time
// went, for keeping make test within its budget.
func slowest(ts []timed, n int) string {
	var top []timed
	for _, t := range ts {
		if !strings.Contains(t.test, "/") {
			top = append(top, t)
		}
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].seconds > top[j].seconds })
	var parts []string
	for _, t := range top[:min(n, len(top))] {
		parts = append(parts, fmt.Sprintf("%s.%s %.0fs", t.pkg[strings.LastIndex(t.pkg, "/")+1:], t.test, t.seconds))
	}
	return strings.Join(parts, ", ")
}

// prefixer prints go test's output lines, each prefixed with where it
// comes from and how far the tier is. Output events may end mid-line; a
// prefix goes only where a line starts.
type prefixer struct {
	w       io.Writer
	tier    string
	midLine bool
}

// modulePath is cut from package paths: the prefix says "conn", not the
// whole import path.
const modulePath = "github.com/gorpma/rpma/"

func (p *prefixer) prefix(pkg string, passed, failed int) string {
	short := strings.TrimPrefix(pkg, modulePath)
	if pkg == strings.TrimSuffix(modulePath, "/") {
		short = "."
	}
	count := fmt.Sprintf("%d passed", passed)
	if failed > 0 {
		count += fmt.Sprintf(", %d failed", failed)
	}
	return fmt.Sprintf("%s %s (%s) | ", p.tier, short, count)
}

func (p *prefixer) write(pkg, out string, passed, failed int) {
	var b strings.Builder
	for out != "" {
		line, rest, full := strings.Cut(out, "\n")
		if !p.midLine {
			b.WriteString(p.prefix(pkg, passed, failed))
		}
		b.WriteString(line)
		if full {
			b.WriteByte('\n')
		}
		p.midLine = !full
		out = rest
	}
	io.WriteString(p.w, b.String())
}
