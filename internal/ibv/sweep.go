package ibv

import "runtime"

// Sweep is what one crossing polls several CQs with (Sweep.Poll): a
// request per CQ (a Reap: the CQ, where its completions go and how many
// fit) and how many each poll got. Both are Go memory pinned for as long
// as the Sweep lives, so that C reads and writes them through integers,
// with no Go pointer crossing.
type Sweep struct {
	Reqs []Reap
	Got  []int32
	pin  runtime.Pinner
}

// NewSweep returns a Sweep for up to n CQs; Free unpins it.
func NewSweep(n int) *Sweep {
	s := &Sweep{Reqs: make([]Reap, max(n, 1)), Got: make([]int32, max(n, 1))}
	s.pin.Pin(&s.Reqs[0])
	s.pin.Pin(&s.Got[0])
	return s
}

// Free unpins s's memory; s must not be polled afterwards. It is
// idempotent.
func (s *Sweep) Free() {
	if s != nil {
		s.pin.Unpin()
	}
}

// PollError is the error of a poll of a Sweep that failed (Got < 0):
// ibv_poll_cq reports failure without errno, so it carries EIO, as
// CQ.Poll's does.
func PollError() error { return callError("ibv_poll_cq", 0) }
