package core

import (
	"sync/atomic"
	"time"

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
// So the data path yields itself, once every yieldPeriod of wall-clock
// time per connection, after a post or an empty poll and outside the data
// lock: the goroutine has then always been scheduled within the last
// 10 ms and is never preempted. A wait that goes past its fast path
// (CQ.Wait, Conn.Wait) restarts the clock: the goroutine was scheduled
// there. The clock is tsc.Read, which counts CPU cycles on amd64 and ns
// elsewhere; yieldCounts is the period in its counts (yieldClock). A
// yield is one trip through the scheduler on the goroutine's own P and
// thread (goyield, goyield.go). It used to be runtime.Gosched, which also
// wakes a second thread when a P is idle (its wakep): with that, the
// yields took 5-15% of a busy poller's CPU samples on the 6.1 TCG guest,
// half of it the wake-up (doc/notes/performance-lab-notes.md, "A profile
// of the busy path on 6.1 (2026-12-03)" and "A yield that wakes no
// thread (2026-12-04)").
//
// The period, yieldPeriod, and why it is 1.5 ms: tuning.go. As a time,
// the share of operations that pay a yield is the same at any counter
// rate, and it stays under sysmon's 10 ms on any CPU.

// yieldCounts is yieldPeriod in counts of tsc.Read, read on the data path
// and set at each yield (yieldClock.measure).
var yieldCounts atomic.Uint64

// yieldClock measures tsc.Read's rate against the wall clock from when
// the package was loaded: at a yield, a millisecond or more later, the
// rate is good to a fraction of a percent, and it only gets better.
var yieldClock = struct {
	wall  time.Time
	count uint64
}{time.Now(), tsc.Read()}

func init() { yieldCounts.Store(yieldGuess) }

// yieldMeasure is measureYield; a test of the yield clock's counting
// replaces it, to count against a fixed yieldCounts.
var yieldMeasure = measureYield

// measureYield sets yieldCounts from the counter's rate up to now. It
// costs a clock read, a counter read and a division, once per yield.
func measureYield() {
	now, ns := tsc.Read(), time.Since(yieldClock.wall)
	if ns < 10*time.Millisecond || now <= yieldClock.count {
		return // too short to tell, or a counter read on another CPU, behind
	}
	counts := float64(now-yieldClock.count) / float64(ns) * float64(yieldPeriod)
	yieldCounts.Store(max(uint64(counts), 1))
}

// unlockAfterCrossing unlocks d after a post or a poll that crossed into
// C, and yields the calling goroutine when the connection's last yield is
// yieldPeriod or more ago.
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
	d.lastYield, d.period = now, yieldCounts.Load()
	d.mu.Unlock()
}

// gosched yields: goyield, the scheduler trip without Gosched's wake-up
// of a second thread (goyield.go). A test counts the yields through it.
var gosched = goyield

// yieldDue (d.mu held) reports whether a goroutine that crossed at now
// should yield, and if so counts the yield from now.
func (d *dataLock) yieldDue(now uint64) bool {
	if d.tune.NoYield || now-d.lastYield < d.period {
		return false
	}
	d.yieldAt(now)
	return true
}

// yieldAt counts a yield due at now (d.mu held): out of yieldDue, so that
// yieldDue stays small enough to inline into the posts.
//
//go:noinline
func (d *dataLock) yieldAt(now uint64) {
	d.lastYield = now
	d.stats.yields++
	yieldMeasure()
	d.period = yieldCounts.Load()
}
