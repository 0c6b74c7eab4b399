package bench

import (
	"bufio"
	"fmt"
	"io"
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

// The two-node run's file names, in a round's directory.
const (
	TwoNodeGoReap   = "go-reap.txt"
	TwoNodeGoNoReap = "go-noreap.txt"
	TwoNodeC        = "c.txt"
)

// TwoNodeRows are the two-node table's rows: the Go benchmark and the
// rpma_lat line it is compared with (SendRecv64 and PostUnsignaled are not
// run: the server posts no receives; AtomicWriteEmulated needs a second
// connection, and the server serves one at a time).
var TwoNodeRows = []Row{
	{Go: "BenchmarkOps/Write64", C: "BenchmarkOps/Write64"},
	{Go: "BenchmarkOps/Read64", C: "BenchmarkOps/Read64"},
	{Go: "BenchmarkOps/Flush", C: "BenchmarkOps/Flush"},
	{Go: "BenchmarkOps/WriteThenFlush64", C: "BenchmarkOps/WriteThenFlush64"},
	{Go: "BenchmarkOps/WriteAndFlush64", C: "BenchmarkOps/WriteThenFlush64", Note: "vs librpma's write + flush"},
	{Go: "BenchmarkOps/AtomicWrite", C: "BenchmarkOps/AtomicWrite"},
	{Go: "BenchmarkOps/Write64Wait", C: "BenchmarkOps/Write64Wait", Note: "event mode: CQ.Wait vs rpma_cq_wait"},
}

// TwoNode is a two-node run: each client's samples, numbered by their
// round (the round-R directory), and what the posts' reaping did.
type TwoNode struct {
	GoReap, GoNoReap, C Set
	Rounds              int
	Reap                ReapCount
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

// LoadTwoNode reads the rounds under dir (round-1, round-2, ...). A
// missing or unreadable file leaves that run out of its round.
func LoadTwoNode(dir string) (TwoNode, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return TwoNode{}, err
	}
	var nums []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "round-"); ok && e.IsDir() {
			if v, err := strconv.Atoi(n); err == nil && v > 0 {
				nums = append(nums, v)
			}
		}
	}
	slices.Sort(nums)
	t := TwoNode{GoReap: Set{}, GoNoReap: Set{}, C: Set{}, Rounds: len(nums)}
	for _, n := range nums {
		d := filepath.Join(dir, fmt.Sprintf("round-%d", n))
		for name, set := range map[string]Set{TwoNodeGoReap: t.GoReap, TwoNodeGoNoReap: t.GoNoReap, TwoNodeC: t.C} {
			s, err := parseFile(filepath.Join(d, name))
			if err != nil {
				continue
			}
			for bench, samples := range s {
				for _, smp := range samples {
					smp.Round = n
					set[bench] = append(set[bench], smp)
				}
			}
		}
		if f, err := os.Open(filepath.Join(d, TwoNodeGoReap)); err == nil {
			c, _ := ParseReap(f)
			f.Close()
			t.Reap.Posts, t.Reap.Reaps, t.Reap.Hits = t.Reap.Posts+c.Posts, t.Reap.Reaps+c.Reaps, t.Reap.Hits+c.Hits
		}
	}
	return t, nil
}

// TwoNodeRow is one operation's figures over the rounds: each client's
// median ns/op, and the per-round ratios.
type TwoNodeRow struct {
	Row
	GoReap, GoNoReap, C float64
	GoOverC             Ratio // Go (reaping on) / C
	ReapOverNoReap      Ratio // Go with reaping on / off
}

// Table computes the rows: each ratio is taken within a round, and only
// where both of its runs have the figure.
func (t TwoNode) Table() []TwoNodeRow {
	var out []TwoNodeRow
	for _, row := range TwoNodeRows {
		on, _ := t.GoReap.Median(row.Go, "ns/op")
		off, _ := t.GoNoReap.Median(row.Go, "ns/op")
		c, _ := t.C.Median(row.C, "ns/op")
		out = append(out, TwoNodeRow{Row: row, GoReap: on, GoNoReap: off, C: c,
			GoOverC:        Paired(t.GoReap, row.Go, t.C, row.C, "ns/op"),
			ReapOverNoReap: Paired(t.GoReap, row.Go, t.GoNoReap, row.Go, "ns/op")})
	}
	return out
}

// Write writes the two-node table (Markdown) and the reap counts.
func (t TwoNode) Write(w io.Writer) {
	fmt.Fprintf(w, "| operation | Go ns/op (reap on) | Go ns/op (reap off) | librpma ns/op | Go/C | spread | reap on/off | spread | rounds |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---|---:|---|---:|\n")
	for _, r := range t.Table() {
		name := shortName(r.Go)
		if r.Note != "" {
			name += " (" + r.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |\n", name,
			fmtNs(r.GoReap), fmtNs(r.GoNoReap), fmtNs(r.C),
			fmtRatio(r.GoOverC.Median, 1), fmtSpread(r.GoOverC), fmtRatio(r.ReapOverNoReap.Median, 1), fmtSpread(r.ReapOverNoReap),
			min(r.GoOverC.N, r.ReapOverNoReap.N), t.Rounds)
	}
	fmt.Fprintf(w, "\nRatios: medians over the rounds of per-round ratios (each round ran its three clients back to back), smallest-largest as the spread.\n")
	fmt.Fprintf(w, "Reaping on (all rounds): %d posts, %d reaped, %d reaps found a completion.\n", t.Reap.Posts, t.Reap.Reaps, t.Reap.Hits)
}
