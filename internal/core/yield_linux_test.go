package core

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/tsc"
)

// monitorThread finds the runtime's monitor thread, sysmon: the thread
// asleep in nanosleep (the runtime's usleep), where the others wait on
// futexes or run. It says "" when no thread is seen there.
func monitorThread(t *testing.T) string {
	for try := 0; try < 100; try++ {
		tasks, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/syscall")
			if err != nil {
				continue // the file needs CONFIG_HAVE_ARCH_TRACEHOOK; the thread may be gone
			}
			nr, _, _ := strings.Cut(string(b), " ")
			if nr == strconv.Itoa(syscall.SYS_NANOSLEEP) || nr == strconv.Itoa(syscall.SYS_CLOCK_NANOSLEEP) {
				return task.Name()
			}
		}
		time.Sleep(time.Millisecond)
	}
	return ""
}

// sleeps is how often the process's threads but the monitor have given up
// their CPUs to wait (voluntary context switches, so far).
func sleeps(t *testing.T, monitor string) int64 {
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var n int64
	for _, task := range tasks {
		if task.Name() == monitor {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread has exited
		}
		_, rest, ok := strings.Cut(string(b), "\nvoluntary_ctxt_switches:")
		require.True(t, ok, "no voluntary_ctxt_switches in /proc/self/task/%s/status", task.Name())
		v, _, _ := strings.Cut(rest, "\n")
		c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		require.NoError(t, err)
		n += c
	}
	return n
}

// busyYielding spins for the given counter ticks (long enough for an
// idle thread that was woken to go back to sleep), then yields, n times,
// and says how often the process's threads but the monitor slept
// meanwhile.
func busyYielding(t *testing.T, monitor string, yield func(), n int, spin uint64) int64 {
	before := sleeps(t, monitor)
	for i := 0; i < n; i++ {
		for end := tsc.Read() + spin; tsc.Read() < end; {
		}
		yield()
	}
	return sleeps(t, monitor) - before
}

// The data path's yield is goyield because a busy poller's yield must not
// wake a second thread: with an idle P, runtime.Gosched wakes one every
// time (it sleeps again when it finds nothing, or takes the goroutine to
// another CPU and the first thread sleeps), which profiles found to be
// most of the yield's cost (doc/notes/performance-lab-notes.md, "A
// profile of the busy path on 6.1 (2026-12-03)"). Gosched is the
// control: it shows that this count sees the wake-ups, and the data path's
// yield is counted the same way right after it. The runtime's monitor
// thread, which sleeps every few ms whatever the yield, is left out of
// the count. On a loaded machine (make test runs packages in parallel) a
// woken thread may not get a CPU before the next yield, and Gosched's next
// wakep then finds it still spinning and wakes nobody: the yields are then
// spaced further apart, and the whole is tried again.
func TestYieldWakesNoThread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n = 100
	busyYielding(t, "", runtime.Gosched, 10, 500_000) // start the runtime's threads
	monitor := monitorThread(t)
	t.Logf("the runtime's monitor thread: %q", monitor)
	var woken, quiet int64
	for try := 0; try < 6 && woken < n/5; try++ {
		for _, spin := range []uint64{500_000, 2_000_000, 4_000_000} {
			woken = busyYielding(t, monitor, runtime.Gosched, n, spin)
			if woken < n/5 {
				t.Logf("runtime.Gosched, %d ticks apart: %d sleeps in %d yields: the woken threads did not run", spin, woken, n)
				continue
			}
			quiet = busyYielding(t, monitor, gosched, n, spin)
			t.Logf("%d yields %d ticks apart: runtime.Gosched %d sleeps, the data path's yield %d", n, spin, woken, quiet)
			break
		}
	}
	require.GreaterOrEqual(t, woken, int64(n/5), "the control: Gosched wakes a thread, which sleeps again")
	require.Less(t, quiet, min(int64(n/10), woken/2), "the data path's yield woke other threads")
}

// The yield is a real one: on a single P, the goroutine that yields lets
// the others run (without one, the spinning goroutine would keep its P
// until the runtime preempted it, 10 ms later: 1000 turns of this loop
// without a yield take microseconds). The other goroutine may not be the
// first the P runs: goroutines left by earlier tests (pollers, timers,
// a GC worker) can be queued before it, so the test allows many yields,
// not the one a quiet process needs.
func TestYieldRunsTheOthers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const yields = 1000
	ran := make(chan struct{})
	go close(ran)
	for i := 0; i < yields; i++ {
		gosched()
		select {
		case <-ran:
			t.Logf("the other goroutine ran after %d yields", i+1)
			return
		default:
		}
	}
	t.Fatalf("%d yields on one P and the other goroutine did not run", yields)
}
