package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ScaleConns are the connection counts of conn's BenchmarkScale and of
// testdata/rpma_scale.c (scripts/bench-scale.sh).
var ScaleConns = []int{1, 16, 64, 256}

// ScaleName is the benchmark name of n connections, the same for Go and C.
func ScaleName(n int) string { return "BenchmarkScale/Conns" + strconv.Itoa(n) }

// first returns the value in unit of name's first sample in s, NaN if
// there is none.
func first(s Set, name, unit string) float64 {
	if len(s[name]) == 0 {
		return math.NaN()
	}
	v, ok := s[name][0].Values[unit]
	if !ok {
		return math.NaN()
	}
	return v
}

// scaleStats are one N's figures over the rounds.
type scaleStats struct {
	goOps, cOps     []float64 // per round that has it
	ratios          []float64 // Go/C ops/s, per round that has both
	goMem, cMem     []float64 // B/conn
	goFDs, cFDs     []float64 // fds/conn
	goSetup, cSetup []float64 // setup-s
}

func collect(rounds []Round, name string) scaleStats {
	var st scaleStats
	add := func(dst *[]float64, v float64) {
		if !math.IsNaN(v) {
			*dst = append(*dst, v)
		}
	}
	for _, r := range rounds {
		g, c := first(r.Go, name, "ops/s"), first(r.C, name, "ops/s")
		add(&st.goOps, g)
		add(&st.cOps, c)
		if !math.IsNaN(g) && !math.IsNaN(c) && c > 0 {
			st.ratios = append(st.ratios, g/c)
		}
		add(&st.goMem, first(r.Go, name, "B/conn"))
		add(&st.cMem, first(r.C, name, "B/conn"))
		add(&st.goFDs, first(r.Go, name, "fds/conn"))
		add(&st.cFDs, first(r.C, name, "fds/conn"))
		add(&st.goSetup, first(r.Go, name, "setup-s"))
		add(&st.cSetup, first(r.C, name, "setup-s"))
	}
	return st
}

func fmtKiB(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.1f", v/1024)
}

func fmtG(v float64, prec int) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// WriteScaleTable writes the Markdown table of a scripts/bench-scale.sh
// run: per connection count, the median over the rounds of Go's and C's
// aggregate ops/s, the median of the per-round Go/C ratios (only rounds
// with both) with their range, and the medians of memory per connection
// (RSS, KiB), open descriptors per connection and set-up time. It
// returns the names with a figure missing in some round.
func WriteScaleTable(w io.Writer, rounds []Round) (missing []string) {
	fmt.Fprintf(w, "| conns | Go ops/s | C ops/s | Go/C ops/s (median of paired rounds) | spread | Go KiB/conn | C KiB/conn | Go fds/conn | C fds/conn | Go setup s | C setup s |\n")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, n := range ScaleConns {
		name := ScaleName(n)
		st := collect(rounds, name)
		if len(st.goOps) < len(rounds) {
			missing = append(missing, fmt.Sprintf("Go %s (%d of %d rounds)", name, len(st.goOps), len(rounds)))
		}
		if len(st.cOps) < len(rounds) {
			missing = append(missing, fmt.Sprintf("C %s (%d of %d rounds)", name, len(st.cOps), len(rounds)))
		}
		ratio, spread := "—", "—"
		if p := ratioOf(st.ratios); p.N > 0 {
			ratio, spread = fmt.Sprintf("%.2f", p.Median), fmt.Sprintf("%.2f–%.2f (%d)", p.Lo, p.Hi, p.N)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n,
			fmtNs(median(st.goOps)), fmtNs(median(st.cOps)), ratio, spread,
			fmtKiB(median(st.goMem)), fmtKiB(median(st.cMem)),
			fmtG(median(st.goFDs), 1), fmtG(median(st.cFDs), 1),
			fmtG(median(st.goSetup), 2), fmtG(median(st.cSetup), 2))
	}
	return missing
}

// ScaleMissing is WriteScaleTable's list of missing figures, as one line.
func ScaleMissing(m []string) string { return strings.Join(m, ", ") }
