package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// traceOf records an execution trace of f.
func traceOf(t *testing.T, f func()) []byte {
	t.Helper()
	if trace.IsEnabled() {
		t.Skip("a trace is already running (go test -trace)")
	}
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	f()
	trace.Stop()
	return buf.Bytes()
}

// knownWakeups runs n goroutines that each block on their own channel and
// are woken once, and a goroutine that only yields (never woken). With
// one P each goroutine runs until it blocks before the main goroutine
// runs again, so every receiver has blocked before its sender comes.
func knownWakeups(n int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
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
}

// TestCountWakeups checks the counter on goroutines whose wake-ups are
// known. Counting yields too (a mutation of the Waiting-to-Runnable
// test) gave 108 for 8.
func TestCountWakeups(t *testing.T) {
	const n = 8
	w, err := countWakeups(bytes.NewReader(traceOf(t, func() { knownWakeups(n) })))
	require.NoError(t, err)
	require.Equal(t, n, w.started, "wake-ups counted: %+v", w)
	require.Greater(t, w.all, w.started, "the main goroutine's wake-ups: %+v", w)
	require.Equal(t, n, w.by["github.com/gorpma/rpma/internal/bench/cmd/benchplot.knownWakeups"], "by waker: %+v", w.by)
}

// TestWriteWakeups: the table of a directory of traces, named as
// conn's BenchmarkGoroutines writes them.
func TestWriteWakeups(t *testing.T) {
	dir := t.TempDir()
	tr := traceOf(t, func() { knownWakeups(4) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "BenchmarkGoroutines_Write64_G=4-N2.trace"), tr, 0o644))
	var out bytes.Buffer
	require.NoError(t, writeWakeups(&out, dir))
	t.Logf("%s", out.String())
	require.Contains(t, out.String(), "| BenchmarkGoroutines/Write64/G=4 | 2 | 2.000 |")
	require.True(t, strings.Contains(out.String(), "knownWakeups: 2.000"), "by waker")
	require.Error(t, writeWakeups(&out, t.TempDir()), "an empty directory")
}
