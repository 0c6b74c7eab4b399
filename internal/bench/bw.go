package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The bandwidth and message-size benchmarks (scripts/bench-bw.sh): conn's
// BenchmarkBandwidth and BenchmarkLatencySize against
// testdata/rpma_bw.c, which prints the same names. A run directory holds
// one pair of files per round: go-NN.txt and c-NN.txt (NN from 01), read
// by LoadRounds.

// BWRow compares one benchmark in one unit over the rounds: the medians of
// each side's per-round values, and the median, least and greatest of the
// per-round ratios Go / C, over the rounds where both sides have it.
type BWRow struct {
	Name            string // without the Benchmark prefix
	Unit            string
	GoMed, CMed     float64 // NaN where a side has no value
	Ratio           float64 // median of the paired ratios (NaN: no pair)
	RatioLo         float64
	RatioHi         float64
	Pairs           int
	GoRuns, CRuns   int
	GoIters, CIters int // the iterations of the last run of each side
}

// sample returns the value in unit of name in s (the last sample, as a
// round's file holds one run), and its iterations.
func sample(s Set, name, unit string) (float64, int, bool) {
	smp := s[name]
	if len(smp) == 0 {
		return 0, 0, false
	}
	v, ok := smp[len(smp)-1].Values[unit]
	return v, smp[len(smp)-1].Iters, ok
}

// CompareBW builds one row per name (full benchmark names, as
// BandwidthNames returns them), in that order.
func CompareBW(rounds []Round, names []string, unit string) []BWRow {
	var rows []BWRow
	for _, name := range names {
		row := BWRow{Name: strings.TrimPrefix(name, "Benchmark"), Unit: unit}
		var gv, cv, q []float64
		for _, r := range rounds {
			g, gi, gok := sample(r.Go, name, unit)
			c, ci, cok := sample(r.C, name, unit)
			if gok {
				gv = append(gv, g)
				row.GoIters = gi
			}
			if cok {
				cv = append(cv, c)
				row.CIters = ci
			}
			if gok && cok && c > 0 {
				q = append(q, g/c)
			}
		}
		p := ratioOf(q)
		row.GoMed, row.CMed, row.GoRuns, row.CRuns = median(gv), median(cv), len(gv), len(cv)
		row.Ratio, row.RatioLo, row.RatioHi, row.Pairs = p.Median, p.Lo, p.Hi, p.N
		rows = append(rows, row)
	}
	return rows
}

// BWKernels, BWSizes, BWDepths and LatSizes are the sub-benchmarks'
// parameters, as conn/bench_bw_linux_test.go and rpma_bw.c run them.
var (
	BWKernels = []string{"Write", "Read"}
	BWSizes   = []string{"4KiB", "64KiB", "1MiB"}
	BWDepths  = []int{1, 4, 16}
	LatSizes  = []string{"8B", "64B", "512B", "4KiB", "32KiB", "256KiB", "1MiB"}
	// LatBytes are the sizes of LatSizes in bytes.
	LatBytes = []int{8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20}
)

// BandwidthNames are the names of BenchmarkBandwidth's sub-benchmarks.
func BandwidthNames() []string {
	var n []string
	for _, k := range BWKernels {
		for _, s := range BWSizes {
			for _, qd := range BWDepths {
				n = append(n, fmt.Sprintf("BenchmarkBandwidth/%s/%s/QD%d", k, s, qd))
			}
		}
	}
	return n
}

// LatencySizeNames are the names of BenchmarkLatencySize's sub-benchmarks.
func LatencySizeNames() []string {
	var n []string
	for _, k := range BWKernels {
		for _, s := range LatSizes {
			n = append(n, fmt.Sprintf("BenchmarkLatencySize/%s/%s", k, s))
		}
	}
	return n
}

func fmtVal(v float64, prec int) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func bwSpread(r BWRow) string {
	if r.Pairs == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f–%.2f", r.RatioLo, r.RatioHi)
}

// WriteBWTables prints the bandwidth table (MB/s; a ratio above 1: Go
// moves more) and the latency table (ns/op, with the medians of each
// round's p50; a ratio above 1: Go is slower) as Markdown.
func WriteBWTables(w io.Writer, rounds []Round) {
	bw := CompareBW(rounds, BandwidthNames(), "MB/s")
	pairs := 0
	for _, r := range bw {
		pairs = max(pairs, r.Pairs)
	}
	fmt.Fprintf(w, "Bandwidth, MB/s (10^6 B/s): medians over the rounds; Go/C: median of the per-round ratios (%d paired rounds), above 1 when Go moves more, and their spread (least–greatest)\n\n", pairs)
	fmt.Fprintln(w, "| benchmark | requests | Go MB/s | C MB/s | Go/C | spread |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	for _, r := range bw {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", r.Name, max(r.GoIters, r.CIters),
			fmtVal(r.GoMed, 1), fmtVal(r.CMed, 1), fmtVal(r.Ratio, 2), bwSpread(r))
	}
	names := LatencySizeNames()
	lat := CompareBW(rounds, names, "ns/op")
	p50 := CompareBW(rounds, names, "p50-ns")
	fmt.Fprintf(w, "\nLatency against message size (queue depth 1), µs: medians over the rounds of each round's mean (ns/op) and median (p50); Go/C of the means, above 1 when Go is slower\n\n")
	fmt.Fprintln(w, "| benchmark | requests | Go mean | C mean | Go p50 | C p50 | Go/C | spread |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|")
	for i, r := range lat {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", r.Name, max(r.GoIters, r.CIters),
			fmtVal(r.GoMed/1e3, 1), fmtVal(r.CMed/1e3, 1), fmtVal(p50[i].GoMed/1e3, 1),
			fmtVal(p50[i].CMed/1e3, 1), fmtVal(r.Ratio, 2), bwSpread(r))
	}
}

// MissingBW lists the benchmarks that no round of a side has, as
// "Go: NAME" or "C: NAME".
func MissingBW(rounds []Round) []string {
	var miss []string
	for _, name := range append(BandwidthNames(), LatencySizeNames()...) {
		var g, c bool
		for _, r := range rounds {
			_, _, ok := sample(r.Go, name, "ns/op")
			g = g || ok
			_, _, ok = sample(r.C, name, "ns/op")
			c = c || ok
		}
		if !g {
			miss = append(miss, "Go: "+name)
		}
		if !c {
			miss = append(miss, "C: "+name)
		}
	}
	return miss
}
