package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	xtrace "golang.org/x/exp/trace"
)

// The goroutine wake-ups of conn's BenchmarkGoroutines runs
// (scripts/bench-goroutines.sh with BENCH_WAKEUPS=1): each run's runtime
// execution trace, NAME-NOPS.trace, is read here, where the trace parser
// (golang.org/x/exp/trace, the Go team's) is a dependency of this tool's
// module rather than of the library's.

// wakeups is what a trace counted.
type wakeups struct {
	started int // wake-ups of goroutines created during the trace (a run's workers), not the runtime's
	all     int // of every goroutine (a dispatcher started before, the runtime's)
	// by waker: the started goroutines' wake-ups by the first function
	// outside the runtime and sync on the waking goroutine's stack (the
	// network poller's when no goroutine woke it).
	by map[string]int
}

// countWakeups reads an execution trace and counts its goroutines'
// wake-ups: a goroutine that blocked (on a channel, a lock, the network
// poller, a sleep) made runnable again, the trace's Waiting to Runnable
// transition. A yield (runtime.Gosched) or a preemption is not a wake-up:
// the goroutine stays runnable.
func countWakeups(r io.Reader) (wakeups, error) {
	tr, err := xtrace.NewReader(r)
	if err != nil {
		return wakeups{}, err
	}
	var (
		w       = wakeups{by: map[string]int{}}
		started = map[xtrace.GoID]bool{}
	)
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			return w, nil
		}
		if err != nil {
			return wakeups{}, err
		}
		if ev.Kind() != xtrace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != xtrace.ResourceGoroutine {
			continue
		}
		id := st.Resource.Goroutine()
		switch from, to := st.Goroutine(); {
		case from == xtrace.GoNotExist && to == xtrace.GoRunnable:
			started[id] = !runtimeGoroutine(st.Stack)
		case from == xtrace.GoWaiting && to == xtrace.GoRunnable:
			w.all++
			if started[id] {
				w.started++
				w.by[waker(ev.Stack())]++
			}
		}
	}
}

// waker names where a wake-up came from: the first function of stack
// outside the runtime, sync and the scheduler's helpers, and its caller
// when it is core's claim signal (a completion's delivery and a wake-up
// for room both signal).
func waker(stack xtrace.Stack) string {
	signal := ""
	for f := range stack.Frames() {
		switch {
		case strings.HasPrefix(f.Func, "runtime."), strings.HasPrefix(f.Func, "sync."),
			strings.HasPrefix(f.Func, "internal/"), strings.HasPrefix(f.Func, "context."):
		case signal == "" && strings.HasSuffix(f.Func, "core.(*opClaim).signal"):
			signal = f.Func
		case signal != "":
			return shortFunc(signal) + " from " + shortFunc(f.Func)
		default:
			return shortFunc(f.Func)
		}
	}
	if signal != "" {
		return shortFunc(signal)
	}
	return "(no goroutine: the network poller or a timer)"
}

// shortFunc drops the library's import path from a function's name.
func shortFunc(f string) string {
	return strings.TrimPrefix(f, "github.com/gorpma/rpma/internal/core.")
}

// runtimeGoroutine reports whether a goroutine's starting stack is the
// runtime's own: the trace's reader and advancer, started with the trace.
func runtimeGoroutine(start xtrace.Stack) bool {
	for f := range start.Frames() {
		return strings.HasPrefix(f.Func, "runtime.") || strings.HasPrefix(f.Func, "runtime/")
	}
	return false
}

// traceName is a trace file's name: the run's, with its operations.
var traceName = regexp.MustCompile(`^(.*)-N(\d+)\.trace$`)

// writeWakeups prints, for every NAME-NOPS.trace in dir, the wake-ups per
// operation as a Markdown table, then each run's wake-ups by waker.
func writeWakeups(w io.Writer, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no *.trace in %s", dir)
	}
	slices.Sort(files)
	type run struct {
		name string
		ops  int
		w    wakeups
	}
	var runs []run
	for _, file := range files {
		m := traceName.FindStringSubmatch(filepath.Base(file))
		if m == nil {
			continue
		}
		ops, _ := strconv.Atoi(m[2])
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		cw, err := countWakeups(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		runs = append(runs, run{strings.ReplaceAll(m[1], "_", "/"), ops, cw})
	}
	fmt.Fprintf(w, "| run | ops | wakeups/op | all-wakeups/op |\n|---|---:|---:|---:|\n")
	for _, r := range runs {
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f |\n", r.name, r.ops,
			float64(r.w.started)/float64(r.ops), float64(r.w.all)/float64(r.ops))
	}
	for _, r := range runs {
		fmt.Fprintf(w, "\n%s, wake-ups per operation by waker:\n\n", r.name)
		wakers := make([]string, 0, len(r.w.by))
		for k := range r.w.by {
			wakers = append(wakers, k)
		}
		slices.SortFunc(wakers, func(a, b string) int { return r.w.by[b] - r.w.by[a] })
		for _, k := range wakers {
			fmt.Fprintf(w, "- %s: %.3f\n", k, float64(r.w.by[k])/float64(r.ops))
		}
	}
	return nil
}
