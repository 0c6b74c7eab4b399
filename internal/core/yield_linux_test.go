package core

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/tsc"
)

// sleeps is how often the process's threads have given up their CPUs to
// wait (voluntary context switches, all threads, so far).
func sleeps(t *testing.T) int64 {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Nvcsw
}

// busyYielding spins for 500 thousand counter ticks (0.1-0.5 ms: long
// enough for an idle thread that was woken to go back to sleep), then
// yields, n times, and says how often the process's threads slept
// meanwhile.
func busyYielding(t *testing.T, yield func(), n int) int64 {
	before := sleeps(t)
	for i := 0; i < n; i++ {
		for end := tsc.Read() + 500_000; tsc.Read() < end; {
		}
		yield()
	}
	return sleeps(t) - before
}

// The data path's yield is goyield because a busy poller's yield must not
// wake a second thread: with an idle P, runtime.Gosched wakes one every
// time (it sleeps again when it finds nothing, or takes the goroutine to
// another CPU and the first thread sleeps), which the profiles in
// doc/performance.md found to be half of the yield's cost. Gosched is the
// control: it shows that this count sees the wake-ups.
func TestYieldWakesNoThread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	busyYielding(t, runtime.Gosched, 20) // start the runtime's threads
	const n = 200
	quiet := busyYielding(t, gosched, n)
	woken := busyYielding(t, runtime.Gosched, n)
	t.Logf("the data path's yield: %d sleeps in %d yields; runtime.Gosched: %d", quiet, n, woken)
	require.GreaterOrEqual(t, woken, int64(n/2), "the control: Gosched wakes a thread, which sleeps again")
	require.Less(t, quiet, int64(n/4), "the data path's yield woke other threads")
}

// The yield is a real one: on a single P, the goroutine that yields lets
// the others run (without one, the spinning goroutine would keep its P
// until the runtime preempted it, 10 ms later).
func TestYieldRunsTheOthers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ran := make(chan struct{})
	go close(ran)
	for i := 0; i < 10; i++ {
		gosched()
		select {
		case <-ran:
			return
		default:
		}
	}
	t.Fatal("10 yields on one P and the other goroutine did not run")
}
