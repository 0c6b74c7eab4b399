package core

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReserveAgainstModel drives a send queue and its CQ budget through
// random reservations, completions, rollbacks, probes and CQ resizes, and
// checks every reservation against a plain model: it succeeds exactly when
// the queue (without the probe's slot) and the CQ (without its reserved
// entries) have room, the high-water marks are the most ever used, and
// the ring has a slot of its own for every outstanding request.
// tryReserve's fast path decides with the marks alone, so a limit change
// that does not lower them (setLimits) shows here as an overrun.
func TestReserveAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for run := 0; run < 200; run++ {
		depth := 1 + rng.Intn(12)
		c := &CQ{} // no stash: a full queue has nothing to poll
		c.budget.capacity = int64(1 + rng.Intn(16))
		c.budget.reserved = int64(rng.Intn(int(c.budget.capacity)))
		c.budget.setLimits()
		q := newWorkQueue(depth, 1, c, &qpState{}, errSQFull)

		var sqHigh uint64
		var cqHigh int64
		for step := 0; step < 300; step++ {
			b := &c.budget
			used := q.posted - q.retired
			if q.probing {
				used--
			}
			switch op := rng.Intn(10); {
			case op < 5: // reserve 1 or 2
				n := uint64(1 + rng.Intn(2))
				fits := used+n <= uint64(depth) && b.used+int64(n) <= b.capacity-b.reserved
				s, err := q.reserve(n)
				require.Equal(t, fits, err == nil, "run %d step %d: reserve(%d) with %d of %d used, CQ %d+%d of %d: %v",
					run, step, n, used, depth, b.used, b.reserved, b.capacity, err)
				if err == nil {
					require.Equal(t, q.posted-n, s)
					sqHigh = max(sqHigh, used+n)
					cqHigh = max(cqHigh, b.used)
					if rng.Intn(4) == 0 {
						q.rollback(s, n, 0)
					}
				}
			case op < 8: // complete some of what is outstanding
				if q.posted > q.retired {
					q.complete(q.retired + uint64(rng.Int63n(int64(q.posted-q.retired))))
				}
			case op < 9: // the liveness probe: a slot beyond depth, no budget
				was := q.probing
				p, ok := q.reserveProbe()
				require.Equal(t, !was, ok, "run %d step %d: one probe outstanding at a time", run, step)
				if ok && rng.Intn(4) == 0 { // its post failed
					p.rollback(0, 1, p.saved)
					require.False(t, q.probing, "run %d step %d: a rolled-back probe is not outstanding", run, step)
				}
			default: // CQ.Resize: down to what is outstanding and reserved, or up
				b.capacity = max(b.used+b.reserved, int64(1+rng.Intn(16)))
				b.setLimits()
			}
			require.LessOrEqual(t, b.used, b.capacity-b.reserved, "run %d step %d: CQ overrun", run, step)
			if used := q.posted - q.retired; q.probing {
				require.LessOrEqual(t, used-1, uint64(depth), "run %d step %d: send queue overrun", run, step)
			} else {
				require.LessOrEqual(t, used, uint64(depth), "run %d step %d: send queue overrun", run, step)
			}
			require.LessOrEqual(t, q.posted-q.retired, uint64(len(q.ring)), "run %d step %d: outstanding requests share a slot of the ring", run, step)
			require.Equal(t, sqHigh, q.high, "run %d step %d: send queue high-water mark", run, step)
			require.Equal(t, cqHigh, b.high, "run %d step %d: CQ high-water mark", run, step)
		}
	}
}
