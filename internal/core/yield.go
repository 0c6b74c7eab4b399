package core

import (
	"github.com/gorpma/rpma/internal/tsc"
)

// Yielding. A goroutine that busy-polls (posts, and GetWC until the
// completion is there) never blocks, so to the Go scheduler it runs for
// ever. Every 10 ms the runtime's monitor thread (sysmon) then preempts it
// with a signal, and when the goroutine is inside C at that moment (in a
// post's system call: on rxe that is most of the time) it also takes the
// goroutine's P, which the goroutine must get back when C returns, often
// on another thread. Each such preemption resets the monitor to waking
// every 20 µs for about a millisecond, each wake a clock read (a system
// call on guests whose clock is the HPET) that competes with the poller
// for a CPU. C librpma's poller has none of this. Measured with
// scripts/bench-sched.sh on 6.1, per 500 busy-polled writes: 14-28
// preemption signals, 267-576 sleeps and about 500 clock reads of the
// monitor, and the poller preempted by it 66 times.
//
// So the data path yields itself, once every yieldCounts counts of
// tsc.Read per connection, after a post or an empty poll and outside the
// data lock: the goroutine has then always been scheduled within the last
// 10 ms and is never preempted. A wait that goes past its fast path
// (CQ.Wait, Conn.Wait) restarts the clock: the goroutine was scheduled
// there. tsc.Read counts CPU cycles on amd64 (4 million is 0.8-4 ms at
// 1-5 GHz) and ns elsewhere (4 ms). A yield is one trip through the
// scheduler on the goroutine's own P and thread (goyield, goyield.go). It
// used to be runtime.Gosched, which also wakes a second thread when a P
// is idle (its wakep): with that, the yields took 5-15% of a busy
// poller's CPU samples on the 6.1 TCG guest, half of it the wake-up
// (doc/notes/performance-lab-notes.md, "A profile of the busy path on
// 6.1 (2026-12-03)" and "A yield that wakes no thread (2026-12-04)").
const yieldCounts = 4_000_000

// yieldOff, set by SetYielding(false), turns the yields off. It is read
// after every post and empty poll that crossed into C (yieldDue), without
// synchronisation; only benchmarks set it.
var yieldOff bool

// SetYielding turns the data path's periodic yield on, the default, or
// off, for every connection of the process: a process-global switch of
// a data-path heuristic, read after every post and empty poll. Only
// benchmarks call it: conn's benchmarks measure the same binary with and without it
// (RPMA_BENCH_YIELD=0). It is not synchronized: call it before any
// connection exists.
func SetYielding(on bool) { yieldOff = !on }

// unlockAfterCrossing unlocks d after a post or a poll that crossed into
// C, and yields the calling goroutine when the connection's last yield is
// yieldCounts or more ago.
func (d *dataLock) unlockAfterCrossing() {
	due := d.yieldDue(tsc.Read())
	d.mu.Unlock()
	if due {
		gosched()
	}
}

// blocked restarts the yield clock of a connection whose goroutine has
// just waited for an event (a wait that went past its fast path, so
// blocked or let others run): a loop that waits for every completion is
// scheduled at each wait and needs no yield of its own.
func (d *dataLock) blocked() {
	now := tsc.Read()
	d.mu.Lock()
	d.lastYield = now
	d.mu.Unlock()
}

// gosched yields: goyield, the scheduler trip without Gosched's wake-up
// of a second thread (goyield.go). A test counts the yields through it.
var gosched = goyield

// yieldDue (d.mu held) reports whether a goroutine that crossed at now
// should yield, and if so counts the yield from now.
func (d *dataLock) yieldDue(now uint64) bool {
	if yieldOff || now-d.lastYield < yieldCounts {
		return false
	}
	d.lastYield = now
	d.stats.yields++
	return true
}
