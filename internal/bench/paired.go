package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The two-node run (scripts/bench-2node.sh) measures, round after round,
// three clients of one server on the other node: Go with the posts'
// reaping on (the default), the same Go binary with it off
// (RPMA_BENCH_REAP=0), and C librpma (rpma_lat -c). Each round's outputs
// sit in their own directory, round-R/{go-reap,go-noreap,c}.txt, so that a
// ratio is only ever taken between runs of the same round, which saw the
// same load of the host.

// Paired file names, in a round's directory.
const (
	PairedGoReap   = "go-reap.txt"
	PairedGoNoReap = "go-noreap.txt"
	PairedC        = "c.txt"
)

// PairedRows are the two-node table's rows: the Go benchmark and the
// rpma_lat line it is compared with (SendRecv64 and PostUnsignaled are not
// run: the server posts no receives).
var PairedRows = []Row{
	{Go: "BenchmarkOps/Write64", C: "BenchmarkOps/Write64"},
	{Go: "BenchmarkOps/Read64", C: "BenchmarkOps/Read64"},
	{Go: "BenchmarkOps/Flush", C: "BenchmarkOps/Flush"},
	{Go: "BenchmarkOps/WriteThenFlush64", C: "BenchmarkOps/WriteThenFlush64"},
	{Go: "BenchmarkOps/WriteAndFlush64", C: "BenchmarkOps/WriteThenFlush64", Note: "vs librpma's write + flush"},
	{Go: "BenchmarkOps/AtomicWrite", C: "BenchmarkOps/AtomicWrite"},
	{Go: "BenchmarkWaitOps/Write64Wait", C: "BenchmarkWaitOps/Write64Wait", Note: "event mode: CQ.Wait vs rpma_cq_wait"},
}

// Round is one round's outputs (a nil Set: that run is missing).
type Round struct {
	GoReap, GoNoReap, C Set
	// Reap sums the go-reap run's "reap:" lines (the client CQ's
	// core.ReapStats at the end of each benchmark function).
	Reap ReapCount
}

// ReapCount counts what the posts of a run did with reaping on.
type ReapCount struct {
	Posts, Reaps, Hits uint64
}

var reapLine = regexp.MustCompile(`reap: (\d+) posts, (\d+) reaped, (\d+) found a completion`)

// ParseReap sums the reap: lines of a Go benchmark's output.
func ParseReap(r io.Reader) (ReapCount, error) {
	var c ReapCount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := reapLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		for i, p := range []*uint64{&c.Posts, &c.Reaps, &c.Hits} {
			v, err := strconv.ParseUint(m[i+1], 10, 64)
			if err != nil {
				return c, err
			}
			*p += v
		}
	}
	return c, sc.Err()
}

// LoadPaired reads the rounds under dir (round-1, round-2, ..., in
// numeric order). A missing or unreadable file leaves its Set nil.
func LoadPaired(dir string) ([]Round, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "round-"); ok && e.IsDir() {
			if v, err := strconv.Atoi(n); err == nil {
				nums = append(nums, v)
			}
		}
	}
	slices.Sort(nums)
	var rounds []Round
	for _, n := range nums {
		d := filepath.Join(dir, fmt.Sprintf("round-%d", n))
		var r Round
		r.GoReap = parsePairedFile(filepath.Join(d, PairedGoReap))
		r.GoNoReap = parsePairedFile(filepath.Join(d, PairedGoNoReap))
		r.C = parsePairedFile(filepath.Join(d, PairedC))
		if f, err := os.Open(filepath.Join(d, PairedGoReap)); err == nil {
			r.Reap, _ = ParseReap(f)
			f.Close()
		}
		rounds = append(rounds, r)
	}
	return rounds, nil
}

// parsePairedFile is ParseBench of the file at path, nil if unreadable.
func parsePairedFile(path string) Set {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	s, err := ParseBench(f)
	if err != nil {
		return nil
	}
	return s
}

// Spread is the median of per-round values, with their least and
// greatest, over N rounds.
type Spread struct {
	Median, Min, Max float64
	N                int
}

func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	return Spread{Median: pairedMedian(v), Min: slices.Min(v), Max: slices.Max(v), N: len(v)}
}

func (s Spread) ratio() string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%.3f-%.3f)", s.Median, s.Min, s.Max)
}

func pairedMedian(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// one is a run's mean ns/op for name (NaN if absent).
func one(s Set, name string) float64 {
	for _, smp := range s[name] {
		if v, ok := smp.Values["ns/op"]; ok {
			return v
		}
	}
	return math.NaN()
}

func pairedNs(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
}

// PairedRow is one operation's figures over the rounds.
type PairedRow struct {
	Row
	GoReap, GoNoReap, C Spread // ns/op per round
	GoOverC             Spread // GoReap / C, per round
	ReapOverNoReap      Spread // GoReap / GoNoReap, per round
}

// Paired computes the rows from the rounds: each ratio is taken within a
// round, and only where both of its runs have the figure.
func Paired(rounds []Round) []PairedRow {
	var out []PairedRow
	for _, row := range PairedRows {
		var on, off, c, goc, onoff []float64
		for _, r := range rounds {
			a, b, x := one(r.GoReap, row.Go), one(r.GoNoReap, row.Go), one(r.C, row.C)
			for _, p := range []struct {
				v   float64
				dst *[]float64
			}{{a, &on}, {b, &off}, {x, &c}} {
				if !math.IsNaN(p.v) {
					*p.dst = append(*p.dst, p.v)
				}
			}
			if !math.IsNaN(a) && !math.IsNaN(x) && x > 0 {
				goc = append(goc, a/x)
			}
			if !math.IsNaN(a) && !math.IsNaN(b) && b > 0 {
				onoff = append(onoff, a/b)
			}
		}
		out = append(out, PairedRow{Row: row, GoReap: spreadOf(on), GoNoReap: spreadOf(off), C: spreadOf(c),
			GoOverC: spreadOf(goc), ReapOverNoReap: spreadOf(onoff)})
	}
	return out
}

// WritePaired writes the two-node table (Markdown) and the reap counts.
func WritePaired(w io.Writer, rounds []Round) {
	fmt.Fprintf(w, "| operation | Go ns/op (reap on) | Go ns/op (reap off) | librpma ns/op | Go/C | reap on/off | rounds |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range Paired(rounds) {
		name := strings.TrimPrefix(r.Go, "Benchmark")
		if r.Note != "" {
			name += " (" + r.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d/%d |\n", name,
			pairedNs(r.GoReap.Median), pairedNs(r.GoNoReap.Median), pairedNs(r.C.Median),
			r.GoOverC.ratio(), r.ReapOverNoReap.ratio(), min(r.GoOverC.N, r.ReapOverNoReap.N), len(rounds))
	}
	var t ReapCount
	for _, r := range rounds {
		t.Posts += r.Reap.Posts
		t.Reaps += r.Reap.Reaps
		t.Hits += r.Reap.Hits
	}
	fmt.Fprintf(w, "\nRatios: medians over the rounds of per-round ratios (each round ran its three clients back to back), least-greatest in brackets.\n")
	fmt.Fprintf(w, "Reaping on (all rounds): %d posts, %d reaped, %d reaps found a completion.\n", t.Posts, t.Reaps, t.Hits)
}
