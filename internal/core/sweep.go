package core

import (
	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
)

// Sweep polls several CQs in one crossing, into their stashes, for a
// goroutine that serves many connections (cq.Sweep). Each CQ's poll runs
// under its data lock, as GetWC's does, so a sweep takes the locks of
// every CQ it polls first (a CQ and an RCQ of one connection share one)
// and skips a CQ whose lock another goroutine holds: that goroutine is
// posting on its connection or polling it, and the CQ comes again in the
// next sweep. It allocates nothing per sweep.
type Sweep struct {
	qs     []*CQ
	buf    *ibv.Sweep
	polled []int       // the index in qs of each of buf's requests
	locked []*dataLock // the locks this sweep holds
	held   []bool      // whether this sweep holds qs[i]'s lock
	closed bool
}

// NewSweep is cq.NewSweep's core; see there.
func NewSweep(qs []*CQ) (*Sweep, error) {
	const op = "cq_sweep"
	if len(qs) == 0 {
		return nil, rpmaerr.Inval(op, "no CQs to sweep")
	}
	for i, q := range qs {
		if q == nil {
			return nil, errNil(op, "CQ")
		}
		for _, o := range qs[:i] {
			if o == q {
				return nil, rpmaerr.Inval(op, "CQ %d is CQ %d again", i, indexOf(qs, o))
			}
		}
	}
	return &Sweep{
		qs:     append([]*CQ(nil), qs...),
		buf:    ibv.NewSweep(len(qs)),
		polled: make([]int, len(qs)),
		locked: make([]*dataLock, 0, len(qs)),
		held:   make([]bool, len(qs)),
	}, nil
}

func indexOf(qs []*CQ, q *CQ) int {
	for i, o := range qs {
		if o == q {
			return i
		}
	}
	return -1
}

// Poll is cq.Sweep.Poll's core: the CQs with room in their stash, not busy.
func (s *Sweep) Poll(ready []int) (int, error) {
	const op = "cq_sweep"
	if s == nil {
		return 0, errNil(op, "sweep")
	}
	if s.closed {
		return 0, errClosed(op, "sweep")
	}
	n := 0
	s.locked = s.locked[:0]
	for i, q := range s.qs {
		s.held[i] = q.dl != nil && s.lock(q.dl)
		if !s.held[i] {
			continue
		}
		if room := len(q.stash) - q.n; room > 0 {
			s.buf.Reqs[n] = q.cq.ReapInto(q.buf, q.n, room)
			s.polled[n] = i
			n++
		}
	}
	s.buf.Poll(n) // the one crossing
	var err error
	for k := range n {
		q := s.qs[s.polled[k]]
		switch got := s.buf.Got[k]; {
		case got > 0:
			q.accept(int(got))
		case got < 0 && err == nil:
			err = provider(op, ibv.PollError())
		}
	}
	w := 0
	for i, q := range s.qs {
		if s.held[i] && q.n > 0 && w < len(ready) {
			ready[w] = i
			w++
		}
	}
	for _, d := range s.locked {
		d.mu.Unlock()
	}
	return w, err
}

// lock takes d for the sweep, unless the sweep holds it already (a CQ
// and an RCQ share one), another goroutine does, or d's connection is
// closed; it reports whether the sweep holds d.
func (s *Sweep) lock(d *dataLock) bool {
	if s.holds(d) {
		return true
	}
	if !d.mu.TryLock() {
		return false
	}
	if d.closed {
		d.mu.Unlock()
		return false
	}
	s.locked = append(s.locked, d)
	return true
}

// holds reports whether the sweep holds d.
func (s *Sweep) holds(d *dataLock) bool {
	for _, l := range s.locked {
		if l == d {
			return true
		}
	}
	return false
}

// Close is cq.Sweep.Close's core; see there.
func (s *Sweep) Close() error {
	if s != nil && !s.closed {
		s.closed = true
		s.buf.Free()
	}
	return nil
}
