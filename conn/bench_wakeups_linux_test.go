//go:build linux && cgo

package conn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// envBenchWakeups names a directory: runGoroutines then records a runtime
// execution trace of each run into it, and counts the threads' sleeps
// and futex calls (threadCounts). The trace is what the goroutine
// wake-ups are counted from, on the host: benchplot -wakeups DIR (the
// parser, golang.org/x/exp/trace, is a dependency of that tool's module,
// not of the library's). The trace costs time and instructions of its
// own, so such runs are for these counts only: scripts/bench-goroutines.sh
// with BENCH_WAKEUPS=1.
const envBenchWakeups = "RPMA_BENCH_WAKEUPS"

// runTrace is a run's execution trace, being written.
type runTrace struct {
	f *os.File
}

// startRunTrace starts a trace of the run named name with n operations,
// into NAME-NOPS.trace (slashes made underscores) in the directory the
// environment names, or returns nil when it names none, and for
// testing.B's first run of one operation. A later run of the same name
// and count replaces the file.
func startRunTrace(b *testing.B, name string, n int) *runTrace {
	dir := os.Getenv(envBenchWakeups)
	if dir == "" || n == 1 {
		return nil
	}
	require.False(b, trace.IsEnabled(), "a trace is already running (go test -trace)")
	file := fmt.Sprintf("%s-N%d.trace", strings.ReplaceAll(name, "/", "_"), n)
	f, err := os.Create(filepath.Join(dir, file))
	require.NoError(b, err)
	if err := trace.Start(f); err != nil {
		f.Close()
		require.NoError(b, err)
	}
	return &runTrace{f: f}
}

// stop ends the trace and closes its file.
func (t *runTrace) stop(b *testing.B) {
	trace.Stop()
	require.NoError(b, t.f.Close())
}
