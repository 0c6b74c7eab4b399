package core

import (
	"runtime"
	"time"

	"github.com/gorpma/rpma/internal/tsc"
)

// The spin before a park, and the lazy arming that makes it pay.
//
// A completion wait that finds nothing (CQ.Wait, and the per-operation
// calls' waits) polls its CQ for a while before it parks: where the
// completion comes within microseconds (a NIC; rxe in a kernel worker on
// another CPU) the spin catches it and the wait costs neither the park's
// system calls nor a wake-up. How long it spins adapts: a first spin at
// the connection's SpinLimit is a probe, which turns the spin off if it
// catches nothing; once a spin caught its completion, the budget doubles
// (to the limit) on every catch and halves on every miss, down to off. A
// CQ whose spin is off probes again after spinRetry waits that parked,
// twice as many after each probe that caught nothing (up to
// spinRetryMax). It is off for good where it cannot pay: with one CPU (the
// completion's producer, rxe's kernel worker, needs that CPU; the
// counted benchmarks, `rxevm -icount`, run one vCPU), on a shared
// completion channel (Conn.Wait's), and when the SpinLimit is NoSpin.
// The clock is tsc.Read, converted with the yield's measured rate
// (yieldCounts): no system call, where a clock read is one on guests
// whose clock source is the HPET.
//
// A spin pays only if the CQ is not armed: an armed CQ raises an event
// for the completion the spin caught, which the next wait reads as a
// spurious wake-up (a read, a re-arm and a poll that finds nothing). So
// while the spin is on, an event read leaves the CQ disarmed (lazy
// arming: ibv.CompChannel.GetCQEvent without rearm), and a wait arms it
// only just before it parks, polling in the same crossing
// (CQ.armForPark, ibv.CQ.ArmPoll): what that poll finds ends the wait
// with no park; anything that comes after it raises the park's event.
// A fast path or a drained CQ may skip a poll only while the CQ is
// armed (every completion since has its event pending). Event loops
// (CQ.FD, TryWait) need every completion to raise an event: they switch
// the CQ to armed for good (eager), arming it at once.
//
// The state is the holder of the wait turn's (every spin, event read and
// park holds it), but armed, which is under the data lock, and eager.

// Its thresholds, and why: tuning.go.

// spinner is a CQ's adaptive spin.
type spinner struct {
	limit  time.Duration // 0: off for good
	budget time.Duration // 0: off until retry parks
	parks  int           // waits that parked with the spin off
	retry  int           // parks with the spin off before it is tried again
	hit    bool          // a spin caught its completion since the spin was last on

	spins, caught uint64 // counted for tests and benchmarks
}

// newSpinner returns a spinner of at most limit (0: off for good), off
// with one CPU.
func newSpinner(limit time.Duration) spinner {
	if limit <= 0 || runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		return spinner{}
	}
	return spinner{limit: limit, budget: limit, retry: spinRetry}
}

// on reports whether the next wait spins (and so whether the CQ is lazy).
func (s *spinner) on() bool { return s.budget > 0 }

// spin calls done until it reports true, for at most the budget, and
// reports whether it did; it adapts the budget. With the spin off it
// counts a park and, after retry of them, turns the spin on again.
func (s *spinner) spin(done func() bool) bool {
	if s.budget == 0 {
		if s.limit > 0 {
			if s.parks++; s.parks >= s.retry {
				s.parks, s.budget = 0, s.limit
			}
		}
		return false
	}
	s.spins++
	end := tsc.Read() + uint64(s.budget)*yieldCounts.Load()/uint64(yieldPeriod)
	for i := 0; i < spinMaxPolls; i++ {
		if done() {
			s.caught++
			s.budget = min(2*s.budget, s.limit)
			s.hit, s.retry = true, spinRetry
			return true
		}
		if tsc.Read() >= end {
			break
		}
	}
	switch {
	case !s.hit:
		// Nothing caught since the spin came on: a probe that failed.
		s.budget = 0
		s.retry = min(2*s.retry, spinRetryMax)
	case s.budget/2 < spinFloor:
		s.budget, s.hit = 0, false
	default:
		s.budget /= 2
	}
	return false
}

// SpinStats reports, for tests and benchmarks, how many waits on q spun
// and how many of those caught their completion, and the spin's budget
// now. Read it only while nothing waits on q.
func SpinStats(q *CQ) (spins, caught uint64, budget time.Duration) {
	return q.spin.spins, q.spin.caught, q.spin.budget
}

// readArgs returns how the holder of the turn reads the CQ's next event:
// whether the read re-arms the CQ (not while the spin is on, unless an
// event loop asked for events: eager) and how many events it
// acknowledges (ackBatch at a time); it notes both for eventRead.
func (q *CQ) readArgs() (rearm bool, ack int) {
	q.evRearm = q.eager.Load() || !q.spin.on()
	q.evAck = 0
	if q.unacked+1 >= ackBatch {
		q.evAck = q.unacked + 1
	}
	return q.evRearm, q.evAck
}

// armForPark arms a disarmed CQ before the holder of the turn parks, and
// polls into the stash in the same crossing; it reports whether the wait
// is over (the stash holds completions), or the arm's failure. On an
// armed CQ it does nothing.
func (q *CQ) armForPark() (bool, error) {
	d := q.dl
	d.mu.Lock()
	defer d.mu.Unlock()
	if q.armed || d.closed {
		return false, nil
	}
	room := len(q.stash) - q.n
	got, err := q.cq.ArmPoll(q.buf, q.n, room)
	if isArmFailure(err) {
		return false, provider("cq_wait", err)
	}
	if err == nil {
		// Accepted as polled while disarmed: what the poll found may
		// have come before the arm, with no event (overLocked).
		q.accept(got)
		q.drained = got < room
	}
	q.armed = true
	return q.n > 0, nil
}

// prepark makes q an armer: its park's wait is over when arming found
// completions (or failed).
func (q *CQ) prepark() bool {
	over, err := q.armForPark()
	q.wres = err
	return over || err != nil || q.overNow()
}

// armEager arms the CQ for good: an event loop (CQ.FD, TryWait) needs an event
// for every completion. A failure to arm is left for the next read to
// retry.
func (q *CQ) armEager() {
	if q.eager.Load() || q.cq == nil {
		return
	}
	q.eager.Store(true)
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	if !q.armed && !q.dl.closed && q.cq.ReqNotify(false) == nil {
		q.armed = true
	}
}

// ackAll acknowledges every event read and not yet acknowledged, before
// the CQ is destroyed.
func (q *CQ) ackAll() {
	q.cq.AckEvents(q.unacked)
	q.unacked = 0
}
