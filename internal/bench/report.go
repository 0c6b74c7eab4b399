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
	"sort"
	"strconv"
	"strings"
)

// Sample is one line of benchmark output: the iterations and every value
// by its unit ("ns/op", "B/op", "p50-ns", ...), and the round it belongs
// to (0 when the output has no round lines).
type Sample struct {
	Iters  int
	Values map[string]float64
	Round  int
}

// Set holds the samples of each benchmark, by name without the -GOMAXPROCS
// suffix, in the order they were read (one per run or round).
type Set map[string][]Sample

var (
	procsSuffix = regexp.MustCompile(`-\d+$`)
	roundLine   = regexp.MustCompile(`^# round (\d+)\b`)
)

// ParseBench reads the output of go test -bench, or of rpma_lat (which
// prints the same format), and returns its samples. A line "# round N"
// (scripts/bench.sh writes one before each round) numbers the samples
// after it, so that Paired can match the rounds of two programs run in
// alternation. Other lines that are not benchmark results are ignored.
func ParseBench(r io.Reader) (Set, error) {
	set := Set{}
	round := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := roundLine.FindStringSubmatch(sc.Text()); m != nil {
			round, _ = strconv.Atoi(m[1])
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		iters, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		s := Sample{Iters: iters, Values: map[string]float64{}, Round: round}
		ok := true
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			s.Values[f[i+1]] = v
		}
		if !ok {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		set[name] = append(set[name], s)
	}
	return set, sc.Err()
}

func (s Set) values(name, unit string) []float64 {
	var v []float64
	for _, smp := range s[name] {
		if x, ok := smp.Values[unit]; ok {
			v = append(v, x)
		}
	}
	return v
}

// Median returns the median over the runs of name of the value in unit,
// and how many runs had it.
func (s Set) Median(name, unit string) (float64, int) {
	v := s.values(name, unit)
	return median(v), len(v)
}

// Min returns the smallest value in unit over the runs of name (NaN if
// none has it): the run least disturbed by the host.
func (s Set) Min(name, unit string) float64 {
	v := s.values(name, unit)
	if len(v) == 0 {
		return math.NaN()
	}
	return slices.Min(v)
}

// Ratio is a ratio of two programs' figures over rounds run in
// alternation: the median of the per-round ratios, their smallest and
// largest, and the number of rounds both programs completed.
type Ratio struct {
	Median, Lo, Hi float64
	N              int
}

// Paired pairs the runs of name in a (aName) with those of b (bName) by
// round, and returns the ratios a/b of their values in unit. Runs of a
// round that one side lacks (it failed or timed out) are left out; where
// the outputs have no round lines, runs pair in order.
func Paired(a Set, aName string, b Set, bName, unit string) Ratio {
	return ratioOf(pairedRatios(a, aName, b, bName, unit))
}

// pairedRatios returns Paired's per-round ratios, in a's order.
func pairedRatios(a Set, aName string, b Set, bName, unit string) []float64 {
	byRound := b.byRound(bName, unit)
	var ratios []float64
	for i, smp := range a[aName] {
		v, ok := smp.Values[unit]
		d, paired := byRound[roundOf(smp, i)]
		if ok && paired {
			ratios = append(ratios, v/d)
		}
	}
	return ratios
}

// byRound returns name's positive values in unit by round (roundOf).
func (s Set) byRound(name, unit string) map[int]float64 {
	m := map[int]float64{}
	for i, smp := range s[name] {
		if v, ok := smp.Values[unit]; ok && v > 0 {
			m[roundOf(smp, i)] = v
		}
	}
	return m
}

// ratioOf summarizes per-round ratios: their median, smallest and largest
// (all NaN when there are none).
func ratioOf(ratios []float64) Ratio {
	if len(ratios) == 0 {
		return Ratio{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return Ratio{Median: median(ratios), Lo: slices.Min(ratios), Hi: slices.Max(ratios), N: len(ratios)}
}

// roundOf is a sample's round, or its position (from -1 down, so that it
// never meets a numbered round) when the output had no round lines.
func roundOf(s Sample, i int) int {
	if s.Round > 0 {
		return s.Round
	}
	return -1 - i
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Perftest is the summary line of one perftest latency run, in ns.
type Perftest struct {
	Bytes, Iters int
	Min, Max     float64
	Typical      float64 // perftest's median
	Avg          float64
	P99          float64
}

// ParsePerftest reads the output of a perftest latency test (ib_*_lat)
// and returns its summary, in ns: the line after the "#bytes" header. Its
// times are in microseconds, or in TSC cycles when perftest ran with -C:
// then cyclesPerNs (the TSC's frequency in GHz) converts them. A time
// that is not finite (perftest prints inf when it could not estimate the
// CPU's frequency) is an error.
func ParsePerftest(r io.Reader, cyclesPerNs float64) (Perftest, error) {
	sc := bufio.NewScanner(r)
	header := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && f[0] == "#bytes" {
			header = true
			continue
		}
		if !header || len(f) < 8 {
			continue
		}
		var p Perftest
		var err error
		if p.Bytes, err = strconv.Atoi(f[0]); err != nil {
			continue
		}
		if p.Iters, err = strconv.Atoi(f[1]); err != nil {
			continue
		}
		ns := make([]float64, 0, 5)
		for _, i := range []int{2, 3, 4, 5, 7} {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil && (math.IsInf(v, 0) || math.IsNaN(v)) {
				err = fmt.Errorf("not a finite time")
			}
			if err != nil {
				return Perftest{}, fmt.Errorf("perftest summary %q: field %d: %v", strings.TrimSpace(sc.Text()), i+1, err)
			}
			if cyclesPerNs > 0 {
				ns = append(ns, v/cyclesPerNs)
			} else {
				ns = append(ns, v*1000)
			}
		}
		p.Min, p.Max, p.Typical, p.Avg, p.P99 = ns[0], ns[1], ns[2], ns[3], ns[4]
		return p, nil
	}
	if err := sc.Err(); err != nil {
		return Perftest{}, err
	}
	return Perftest{}, fmt.Errorf("no perftest summary line")
}

// Row is one operation of the comparison: the Go sub-benchmark, the
// rpma_lat line that measures the same thing with librpma, and the
// perftest run closest to it, if any. The Go sub-benchmark's per-operation
// median and 99th percentile come from its stamped twin (Stamped).
type Row struct {
	Go, C    string
	Perftest string // key of the perftest run (file perftest-KEY.txt), or ""
	Note     string
}

// Stamped is the name of the Go sub-benchmark that measures the row's
// operation with a time stamp after each (BenchmarkOpsStamped), or "".
func (r Row) Stamped() string {
	if op, ok := strings.CutPrefix(r.Go, "BenchmarkOps/"); ok {
		return "BenchmarkOpsStamped/" + op
	}
	return ""
}

// HalfRTT marks the perftest runs that are ping-pongs: perftest reports
// half the round trip, where the Go and librpma rows wait for their own
// completion (the request and its acknowledgement).
var HalfRTT = map[string]bool{"write64": true, "send64": true}

// PerftestRuns are the perftest runs of the comparison, by key: the
// program and its arguments (scripts/bench.sh adds -R, -C, -n, -p and,
// for the client, the address).
var PerftestRuns = []struct{ Key, Cmd string }{
	{"write64", "ib_write_lat -s 64"},
	{"read64", "ib_read_lat -s 64"},
	{"read8", "ib_read_lat -s 8"},
	{"atomic", "ib_atomic_lat"},
	{"send64", "ib_send_lat -s 64"},
}

// Rows are the rows of the table, in order.
var Rows = []Row{
	{"BenchmarkOps/Write64", "BenchmarkOps/Write64", "write64", "ib_write_lat -s 64: ping-pong, half round trip"},
	{"BenchmarkOps/Read64", "BenchmarkOps/Read64", "read64", "ib_read_lat -s 64"},
	{"BenchmarkOps/Flush", "BenchmarkOps/Flush", "read8", "emulated flush = 8-byte read; ib_read_lat -s 8"},
	{"BenchmarkOps/WriteThenFlush64", "BenchmarkOps/WriteThenFlush64", "", ""},
	{"BenchmarkOps/WriteAndFlush64", "BenchmarkOps/WriteThenFlush64", "", "librpma has no chained post: vs its write + flush"},
	{"BenchmarkOps/AtomicWrite", "BenchmarkOps/AtomicWrite", "atomic", "Go's native where the device has it (the header says); ib_atomic_lat: fetch-and-add, 8 B"},
	{"BenchmarkOps/AtomicWriteEmulated", "BenchmarkOps/AtomicWrite", "", "Go made to emulate it, as librpma 1.2.0 does: like for like"},
	{"BenchmarkOps/SendRecv64", "BenchmarkOps/SendRecv64", "send64", "ib_send_lat -s 64: ping-pong, half round trip"},
	{"BenchmarkOps/Write64Wait", "BenchmarkOps/Write64Wait", "", "completed through the completion event: CQ.Wait vs rpma_cq_wait"},
	{"BenchmarkOps/Write64WaitThread", "BenchmarkOps/Write64Wait", "", "Write64Wait with conn.WaitThread (the waiting thread blocks in epoll_wait) vs rpma_cq_wait"},
	{"BenchmarkPostUnsignaled", "BenchmarkPostUnsignaled", "", "post only (8 B unsignaled write)"},
}

// Results are the outputs of one kernel's run.
type Results struct {
	Go, C    Set
	NoYield  Set // Go without the data path's yield (go-noyield.txt)
	Perftest map[string]Perftest
}

func shortName(name string) string {
	return strings.TrimPrefix(strings.TrimPrefix(name, "BenchmarkOps/"), "Benchmark")
}

func fmtNs(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
}

func fmtRatio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func (r Results) perftest(key string) (Perftest, bool) {
	if key == "" {
		return Perftest{}, false
	}
	p, ok := r.Perftest[key]
	return p, ok
}

// WriteMeans writes the main table (Markdown): per operation the Go and
// librpma ns/op (each the median over the rounds of a round's mean), the
// median of the per-round Go/librpma ratios and their spread (smallest to
// largest), perftest's mean and the Go/perftest ratio.
func (r Results) WriteMeans(w io.Writer) {
	fmt.Fprintln(w, "| operation | Go ns/op | librpma ns/op | Go/librpma | spread | rounds | perftest ns/op | Go/perftest | notes |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|---:|---:|---|")
	for _, row := range Rows {
		g, _ := r.Go.Median(row.Go, "ns/op")
		c, _ := r.C.Median(row.C, "ns/op")
		p := Paired(r.Go, row.Go, r.C, row.C, "ns/op")
		pt := math.NaN()
		if p, ok := r.perftest(row.Perftest); ok {
			pt = p.Avg
		}
		pratio := fmtRatio(g, pt)
		if HalfRTT[row.Perftest] && pratio != "—" {
			pratio += " *"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", shortName(row.Go),
			fmtNs(g), fmtNs(c), fmtRatio(p.Median, 1), fmtSpread(p), p.N, fmtNs(pt), pratio, row.Note)
	}
}

func fmtSpread(p Ratio) string {
	if p.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f-%.2f", p.Lo, p.Hi)
}

// WriteMedians writes the per-operation medians and 99th percentiles, in
// ns: Go's (from BenchmarkOpsStamped), librpma's program's and perftest's,
// each the median over the rounds, with the median of the per-round
// Go/librpma ratios of the medians. A ratio of the medians near 1 with a
// larger ratio of the means says that the gap is in the tail (operations
// that wait for a scheduler), not in every operation.
func (r Results) WriteMedians(w io.Writer) {
	fmt.Fprintln(w, "| operation | Go p50 | librpma p50 | Go/librpma p50 | Go p99 | librpma p99 | perftest p50 | perftest p99 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, row := range Rows {
		st := row.Stamped()
		if st == "" {
			continue
		}
		g50, _ := r.Go.Median(st, "p50-ns")
		g99, _ := r.Go.Median(st, "p99-ns")
		p50, _ := r.C.Median(row.C, "p50-ns")
		p99, _ := r.C.Median(row.C, "p99-ns")
		t50, t99 := math.NaN(), math.NaN()
		if p, ok := r.perftest(row.Perftest); ok {
			t50, t99 = p.Typical, p.P99
		}
		ratio := Paired(r.Go, st, r.C, row.C, "p50-ns")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", shortName(row.Go), fmtNs(g50), fmtNs(p50), fmtRatio(ratio.Median, 1),
			fmtNs(g99), fmtNs(p99), fmtNs(t50), fmtNs(t99))
	}
}

// Runs reports the number of runs behind the Go and librpma figures (the
// fewest over the rows that have any).
func (r Results) Runs() (goRuns, cRuns int) {
	goRuns, cRuns = math.MaxInt, math.MaxInt
	for _, row := range Rows {
		if _, n := r.Go.Median(row.Go, "ns/op"); n > 0 && n < goRuns {
			goRuns = n
		}
		if _, n := r.C.Median(row.C, "ns/op"); n > 0 && n < cRuns {
			cRuns = n
		}
	}
	if goRuns == math.MaxInt {
		goRuns = 0
	}
	if cRuns == math.MaxInt {
		cRuns = 0
	}
	return goRuns, cRuns
}

// Missing lists what the table lacks: rows without a Go or librpma figure
// and perftest runs without a summary.
func (r Results) Missing() []string {
	var m []string
	for _, row := range Rows {
		if _, n := r.Go.Median(row.Go, "ns/op"); n == 0 {
			m = append(m, "Go "+shortName(row.Go))
		}
		if _, n := r.C.Median(row.C, "ns/op"); n == 0 && row.C == row.Go {
			m = append(m, "librpma "+shortName(row.C))
		}
		if st := row.Stamped(); st != "" {
			if _, n := r.Go.Median(st, "p50-ns"); n == 0 {
				m = append(m, "Go stamped "+shortName(row.Go))
			}
		}
	}
	for _, p := range PerftestRuns {
		if _, ok := r.Perftest[p.Key]; !ok {
			m = append(m, "perftest "+p.Cmd)
		}
	}
	return m
}

// Load reads the outputs that scripts/bench.sh collects in dir for one
// kernel: go.txt (go test -bench), go-noyield.txt (the same without the
// data path's yield), c.txt (rpma_lat), perftest-KEY.txt
// (the client side of each perftest run, in TSC cycles: perftest -C) and
// tsc-mhz.txt (the guest's TSC frequency, which converts them). A missing
// or unreadable file leaves its part empty; Missing then names it.
func Load(dir string) Results {
	r := Results{Go: Set{}, C: Set{}, NoYield: Set{}, Perftest: map[string]Perftest{}}
	if s, err := parseFile(filepath.Join(dir, "go.txt")); err == nil {
		r.Go = s
	}
	if s, err := parseFile(filepath.Join(dir, "go-noyield.txt")); err == nil {
		r.NoYield = s
	}
	if s, err := parseFile(filepath.Join(dir, "c.txt")); err == nil {
		r.C = s
	}
	b, err := os.ReadFile(filepath.Join(dir, "tsc-mhz.txt"))
	if err != nil {
		return r
	}
	mhz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil || mhz <= 0 {
		return r
	}
	for _, p := range PerftestRuns {
		f, err := os.Open(filepath.Join(dir, "perftest-"+p.Key+".txt"))
		if err != nil {
			continue
		}
		if pt, err := ParsePerftest(f, mhz/1000); err == nil {
			r.Perftest[p.Key] = pt
		}
		f.Close()
	}
	return r
}

func parseFile(path string) (Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseBench(f)
}
