//go:build linux && cgo

package conn_test

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/bench"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// threadCounts counts, over a run, what the threads of the process cost
// the kernel beyond the operations' own system calls (issue 34's "futex
// calls ... per completed operation"):
//   - sleeps: voluntary context switches of all the process's threads
//     (getrusage's ru_nvcsw): a thread that blocked, in a futex wait, a
//     blocking epoll_wait or a blocking read; each is a wake-up later;
//   - futex: futex system calls of the machine (the tracepoint
//     syscalls:sys_enter_futex on every CPU: futexCounters), when the
//     kernel lets the process count them (root, tracefs): else -1.
type threadCounts struct {
	sleeps, futex int64 // at the start
}

// startThreadCounts starts counting, the futex calls too when futex.
func startThreadCounts(futex bool) *threadCounts {
	t := &threadCounts{futex: -1}
	if futex {
		t.futex = futexCalls()
	}
	t.sleeps = voluntarySwitches()
	return t
}

// stop returns the sleeps and futex calls since the start (futex -1 when
// not counted).
func (t *threadCounts) stop() (sleeps, futex int64) {
	sleeps = voluntarySwitches() - t.sleeps
	futex = -1
	if t.futex >= 0 {
		futex = futexCalls() - t.futex
	}
	return sleeps, futex
}

func voluntarySwitches() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Nvcsw
}

// futexCounters count the futex calls (syscalls:sys_enter_futex),
// opened once per process (bench.OpenTracepoint says why).
var futexCounters = sync.OnceValue(func() []int { return bench.OpenTracepoint("syscalls/sys_enter_futex") })

// syscallCounters count every system call (raw_syscalls:sys_enter), for
// BenchmarkOps' syscalls/op (envBenchSyscalls).
var syscallCounters = sync.OnceValue(func() []int { return bench.OpenTracepoint("raw_syscalls/sys_enter") })

// clockCounters count clock_gettime calls (syscalls:sys_enter_clock_gettime):
// a system call on the test VM, whose clock source is the HPET, and a
// vDSO call with none on hardware with a usable TSC.
var clockCounters = sync.OnceValue(func() []int { return bench.OpenTracepoint("syscalls/sys_enter_clock_gettime") })

// clockCalls returns the clock_gettime system calls counted so far, or -1.
func clockCalls() int64 { return bench.ReadTracepoint(clockCounters()) }

// futexCalls returns the futex calls counted so far, or -1.
func futexCalls() int64 { return bench.ReadTracepoint(futexCounters()) }

// systemCalls returns the system calls counted so far, or -1.
func systemCalls() int64 { return bench.ReadTracepoint(syscallCounters()) }

// TestThreadCounts checks the counters on a thread that sleeps a known
// number of times: each futex wait of a goroutine locked to its thread,
// woken by another, is one voluntary switch and one futex call at least.
func TestThreadCounts(t *testing.T) {
	const n = 50
	ping, pong := make(chan struct{}), make(chan struct{})
	// In the test VM only the benchmarks enable the tracepoint (once, and
	// see futexCounters): the test tiers' guests are not put at risk.
	c := startThreadCounts(os.Getenv(rdmatest.EnvIP) == "")
	go func() {
		runtime.LockOSThread() // its waits put the thread to sleep
		defer runtime.UnlockOSThread()
		for range n {
			<-ping
			pong <- struct{}{}
		}
	}()
	runtime.LockOSThread()
	for range n {
		ping <- struct{}{}
		<-pong
	}
	runtime.UnlockOSThread()
	sleeps, futex := c.stop()
	t.Logf("%d round trips between locked threads: %d voluntary switches, %d futex calls (-1: not counted here)", n, sleeps, futex)
	if sleeps < n {
		t.Errorf("%d voluntary switches for %d round trips between two locked threads: the count misses sleeps", sleeps, n)
	}
	if futex >= 0 && futex < n {
		t.Errorf("%d futex calls for %d round trips between two locked threads: the count misses calls", futex, n)
	}
}
