package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A scheduler trace (scripts/bench-sched.sh) records, inside the guest,
// ftrace's sched_switch and sched_wakeup events, every system call's
// entry and rxe's work items (workqueue_execute_start, function do_work)
// while one program busy-polls one operation. SchedStats reads it: where
// the program's threads ran, where rxe's kernel workers were woken, and
// how long they waited to run. It explains the gap between Go and C on
// Linux 6.12, where rxe completes requests from a work queue
// (doc/notes/performance-lab-notes.md, "The 6.12 gap: the Go runtime's
// threads and rxe's kworker").

// TraceEvent is one line of an ftrace text trace.
type TraceEvent struct {
	Comm  string
	PID   int
	CPU   int
	Time  float64 // seconds
	Event string
	Data  string
}

var traceLine = regexp.MustCompile(`^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$`)

// ParseTrace reads an ftrace text trace (the tracing/trace file), in time
// order.
func ParseTrace(r io.Reader) ([]TraceEvent, error) {
	var evs []TraceEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := traceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		cpu, _ := strconv.Atoi(m[3])
		t, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			continue
		}
		evs = append(evs, TraceEvent{Comm: strings.TrimSpace(m[1]), PID: pid, CPU: cpu, Time: t, Event: m[5], Data: m[6]})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time < evs[j].Time })
	return evs, sc.Err()
}

// Who ran on a vCPU, from the polling program's point of view.
const (
	RolePoller = "poller"      // the thread that made the program's latest post
	RoleOther  = "proc-other"  // another thread of the program
	RoleRXE    = "rxe-kworker" // a kernel worker that has run rxe's work
	RoleIdle   = "idle"
	RoleElse   = "other"
)

// SchedStats is what a trace says about one program's run.
type SchedStats struct {
	Posts   int // doorbell writes (see isPost)
	Threads int // the program's threads seen
	// Hops: consecutive posts made by different threads (a Go goroutine
	// moving to another M).
	Hops int
	// Share: each role's share of all vCPUs' time between the first and
	// the last post.
	Share map[string]float64
	// Wakeups of rxe's kernel workers, by what their target vCPU was
	// running when they were woken, and how long (µs) they took to run.
	Wakeups        int
	WakeTarget     map[string]int
	WakeToRunP50Us float64
	WakeToRunP90Us float64
	// Syscalls: the program's system calls between the first and the last
	// post, by x86-64 number (posts included): for Go, the runtime's
	// nanosleep (35: sysmon), futex (202: threads parked and woken) and
	// tgkill (234: preemption signals).
	Syscalls map[int]int
}

// x86-64 system call numbers that WriteSched counts.
const (
	sysNanosleep = 35
	sysFutex     = 202
	sysTgkill    = 234
)

// isPost tells rxe's doorbell: rdma-core's rxe provider rings it after
// queueing send requests with a 32-byte write (struct ibv_post_send, with
// no work requests) to the uverbs command fd, one per post.
func isPost(e TraceEvent) bool {
	if e.Event != "sys_enter" || !strings.HasPrefix(e.Data, "NR 1 (") {
		return false
	}
	args := strings.Split(strings.TrimSuffix(strings.TrimPrefix(e.Data, "NR 1 ("), ")"), ", ")
	return len(args) >= 3 && args[2] == "20"
}

var (
	nextPID   = regexp.MustCompile(`next_pid=(\d+)`)
	wakePID   = regexp.MustCompile(` pid=(\d+)`)
	wakeCPU   = regexp.MustCompile(`target_cpu=(\d+)`)
	rxeWorkFn = "do_work [rdma_rxe]"
)

// AnalyzeSched computes the stats of the program whose threads' names
// start with comm (ftrace keeps 15 characters of a name).
func AnalyzeSched(evs []TraceEvent, comm string) (SchedStats, error) {
	threads := map[int]bool{}
	rxe := map[int]bool{}
	var posts []TraceEvent
	for _, e := range evs {
		if strings.HasPrefix(e.Comm, comm) {
			threads[e.PID] = true
			if isPost(e) {
				posts = append(posts, e)
			}
		}
		if e.Event == "workqueue_execute_start" && strings.Contains(e.Data, rxeWorkFn) {
			rxe[e.PID] = true
		}
	}
	if len(posts) < 2 {
		return SchedStats{}, fmt.Errorf("%d posts by %q in the trace", len(posts), comm)
	}
	s := SchedStats{Posts: len(posts), Threads: len(threads), Share: map[string]float64{}, WakeTarget: map[string]int{}, Syscalls: map[int]int{}}
	for i := 1; i < len(posts); i++ {
		if posts[i].PID != posts[i-1].PID {
			s.Hops++
		}
	}
	t0, t1 := posts[0].Time, posts[len(posts)-1].Time
	poller := posts[0].PID
	role := func(pid int, known bool) string {
		switch {
		case !known:
			return RoleElse
		case pid == 0:
			return RoleIdle
		case pid == poller:
			return RolePoller
		case threads[pid]:
			return RoleOther
		case rxe[pid]:
			return RoleRXE
		}
		return RoleElse
	}
	running := map[int]int{} // vCPU -> pid
	since := map[int]float64{}
	woken := map[int]float64{} // rxe worker -> when it was woken
	var delays []float64
	next := 0
	for _, e := range evs {
		if e.Time > t1 {
			break
		}
		for next < len(posts) && posts[next].Time <= e.Time {
			poller = posts[next].PID
			next++
		}
		if e.Event == "sys_enter" && e.Time >= t0 && threads[e.PID] {
			var nr int
			if _, err := fmt.Sscanf(e.Data, "NR %d ", &nr); err == nil {
				s.Syscalls[nr]++
			}
		}
		if e.Event == "sched_switch" {
			m := nextPID.FindStringSubmatch(e.Data)
			if m == nil {
				continue
			}
			pid, _ := strconv.Atoi(m[1])
			if e.Time >= t0 {
				prev, known := running[e.CPU]
				s.Share[role(prev, known)] += e.Time - max(since[e.CPU], t0)
				if w, ok := woken[pid]; ok {
					delays = append(delays, (e.Time-w)*1e6)
					delete(woken, pid)
				}
			}
			running[e.CPU], since[e.CPU] = pid, e.Time
			continue
		}
		if e.Event != "sched_wakeup" || e.Time < t0 {
			continue
		}
		pm, cm := wakePID.FindStringSubmatch(e.Data), wakeCPU.FindStringSubmatch(e.Data)
		if pm == nil || cm == nil {
			continue
		}
		pid, _ := strconv.Atoi(pm[1])
		if !rxe[pid] {
			continue
		}
		cpu, _ := strconv.Atoi(cm[1])
		prev, known := running[cpu]
		s.Wakeups++
		s.WakeTarget[role(prev, known)]++
		woken[pid] = e.Time
	}
	for cpu, pid := range running {
		start := max(since[cpu], t0)
		s.Share[role(pid, true)] += t1 - start
	}
	var total float64
	for _, v := range s.Share {
		total += v
	}
	for k, v := range s.Share {
		s.Share[k] = v / total
	}
	s.WakeToRunP50Us, s.WakeToRunP90Us = percentile(delays, 50), percentile(delays, 90)
	return s, nil
}

func percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[max(0, (len(v)*p+99)/100-1)] // nearest rank
}

// WriteSched writes one Markdown row per run: name, then s's figures.
func WriteSched(w io.Writer, names []string, stats []SchedStats) {
	fmt.Fprintln(w, "| run | posts | threads | hops | nanosleep / futex / tgkill | vCPU time: poller / other threads / rxe / idle | rxe wake-ups | woken onto: poller / other threads / rxe / idle | wake to run p50 / p90 µs |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|---:|---|---|")
	for i, s := range stats {
		pct := func(k string) string { return fmt.Sprintf("%.0f%%", 100*s.Share[k]) }
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d / %d / %d | %s / %s / %s / %s | %d | %d / %d / %d / %d | %.0f / %.0f |\n", names[i],
			s.Posts, s.Threads, s.Hops, s.Syscalls[sysNanosleep], s.Syscalls[sysFutex], s.Syscalls[sysTgkill], pct(RolePoller), pct(RoleOther), pct(RoleRXE), pct(RoleIdle),
			s.Wakeups, s.WakeTarget[RolePoller], s.WakeTarget[RoleOther], s.WakeTarget[RoleRXE], s.WakeTarget[RoleIdle],
			s.WakeToRunP50Us, s.WakeToRunP90Us)
	}
}

// The timing half of scripts/bench-sched.sh: in alternation, untraced,
// Go's BenchmarkOps and BenchmarkOpsStamped Write64 as is (go.txt), the
// same pinned to one vCPU (gopin.txt), the same without the data path's
// yield (gonoyield.txt) and rpma_lat -o Write64 (c.txt), each round marked
// "# round N". A run whose file is missing (outputs of an older script) is
// left out.
var schedTimingRuns = []struct{ File, Name string }{
	{"go.txt", "Go"},
	{"gopin.txt", "Go, pinned to vCPU 0 (taskset -c 0, GOMAXPROCS=2)"},
	{"gonoyield.txt", "Go without its yield (RPMA_BENCH_YIELD=0)"},
}

// WriteSchedTiming writes the timing table of the run in dir: per Go
// variant, its mean and median Write64 against librpma's, as medians of
// the per-round ratios with their spread.
func WriteSchedTiming(w io.Writer, dir string) error {
	c, err := parseFile(filepath.Join(dir, "c.txt"))
	if err != nil {
		return err
	}
	const op = "BenchmarkOps/Write64"
	cm, _ := c.Median(op, "ns/op")
	c50, _ := c.Median(op, "p50-ns")
	fmt.Fprintln(w, "| Write64 | ns/op | p50 ns | ns/op vs librpma | spread | p50 vs librpma | spread | rounds |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|---|---:|")
	fmt.Fprintf(w, "| librpma | %s | %s | | | | | |\n", fmtNs(cm), fmtNs(c50))
	for _, run := range schedTimingRuns {
		g, err := parseFile(filepath.Join(dir, run.File))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		const stamped = "BenchmarkOpsStamped/Write64"
		gm, _ := g.Median(op, "ns/op")
		g50, _ := g.Median(stamped, "p50-ns")
		mean, p50 := Paired(g, op, c, op, "ns/op"), Paired(g, stamped, c, op, "p50-ns")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", run.Name, fmtNs(gm), fmtNs(g50),
			fmtRatio(mean.Median, 1), fmtSpread(mean), fmtRatio(p50.Median, 1), fmtSpread(p50), min(mean.N, p50.N))
	}
	return nil
}
