//go:build linux && cgo

package conn_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"runtime/trace"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	xtrace "golang.org/x/exp/trace"
)

// envBenchWakeups makes runGoroutines count goroutine wake-ups from a
// runtime execution trace (issue 34's "goroutine wake-ups per
// completion"). The trace costs time and instructions of its own, so it
// is a run of its own: scripts/bench-goroutines.sh with BENCH_WAKEUPS=1.
const envBenchWakeups = "RPMA_BENCH_WAKEUPS"

// wakeupTrace counts goroutine wake-ups while it runs: a goroutine that
// blocked (on a channel, a lock, the network poller, a sleep) made
// runnable again, the trace's Waiting to Runnable transition. A yield
// (runtime.Gosched) or a preemption is not a wake-up: the goroutine stays
// runnable.
type wakeupTrace struct {
	buf bytes.Buffer
}

// startWakeupTrace starts a trace when the environment asks for one,
// else returns nil.
func startWakeupTrace(b *testing.B) *wakeupTrace {
	if os.Getenv(envBenchWakeups) == "" {
		return nil
	}
	t := &wakeupTrace{}
	require.NoError(b, trace.Start(&t.buf))
	return t
}

// wakeups is what a trace counted.
type wakeups struct {
	started int // wake-ups of goroutines created during the trace (a run's workers), not the runtime's
	all     int // of every goroutine (a dispatcher started before, the runtime's)
	// by waker: the started goroutines' wake-ups by the first function
	// outside the runtime and sync on the waking goroutine's stack (the
	// network poller's when no goroutine woke it).
	by map[string]int
}

// stop ends the trace and counts its wake-ups.
func (t *wakeupTrace) stop(b *testing.B) wakeups {
	trace.Stop()
	w, err := countWakeups(&t.buf)
	require.NoError(b, err)
	return w
}

// countWakeups reads an execution trace and counts its goroutines'
// wake-ups.
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
			return signal + " from " + strings.TrimPrefix(f.Func, "github.com/gorpma/rpma/internal/core.")
		default:
			return f.Func
		}
	}
	if signal != "" {
		return signal
	}
	return "(no goroutine: the network poller or a timer)"
}

// runtimeGoroutine reports whether a goroutine's starting stack is the
// runtime's own: the trace's reader and advancer, started with the trace.
func runtimeGoroutine(start xtrace.Stack) bool {
	for f := range start.Frames() {
		return strings.HasPrefix(f.Func, "runtime.") || strings.HasPrefix(f.Func, "runtime/")
	}
	return false
}

// TestCountWakeups checks the counter on goroutines whose wake-ups are
// known: each of n blocks on its own channel and is woken once, and a
// goroutine that only yields is never woken. With one P each goroutine
// runs until it blocks before the main goroutine runs again, so every
// receiver has blocked before its sender comes.
func TestCountWakeups(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("a trace is already running (go test -trace)")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const n = 8
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	chans := make([]chan int, n)
	blocked := make(chan struct{}, n) // buffered: its senders never block
	done := make(chan struct{}, n+1)
	for i := range chans {
		chans[i] = make(chan int)
		go func() {
			blocked <- struct{}{}
			<-chans[i] // blocks: the sender below comes after
			done <- struct{}{}
		}()
	}
	for range n {
		<-blocked // the main goroutine's wake-ups: not started in the trace
	}
	go func() { // yields only: no wake-up of its own
		for range 100 {
			runtime.Gosched()
		}
		done <- struct{}{}
	}()
	for i := range chans {
		chans[i] <- i
	}
	for range n + 1 {
		<-done
	}
	trace.Stop()
	w, err := countWakeups(&buf)
	require.NoError(t, err)
	require.Equal(t, n, w.started, "wake-ups counted: %+v", w)
	require.Greater(t, w.all, w.started, "the main goroutine's wake-ups: %+v", w)
}
