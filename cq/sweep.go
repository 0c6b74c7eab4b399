package cq

import "github.com/gorpma/rpma/internal/core"

// Sweep polls many CQs in one crossing into C (one ibv_poll_cq per CQ,
// made from one C call), for a goroutine that busy-polls the CQs of many
// connections: polling 16 CQs one by one costs 16 crossings, a sweep one.
// It has no librpma counterpart.
//
// Poll leaves each CQ's completions in the CQ (with the library, not in
// the provider), and GetWC then returns them without a crossing of its
// own. A CQ whose connection another goroutine is posting on or polling
// at that moment is skipped, and comes again in the next Poll; a CQ whose
// connection is closed is never ready. A Sweep is for one goroutine at a
// time; the CQs stay safe for concurrent use by others.
type Sweep core.Sweep

// NewSweep returns a sweep over cqs: at least one, each non-nil, none
// twice. Close it when done.
func NewSweep(cqs ...*CQ) (*Sweep, error) {
	qs := make([]*core.CQ, len(cqs))
	for i, q := range cqs {
		qs[i] = q.core()
	}
	s, err := core.NewSweep(qs)
	return (*Sweep)(s), err
}

// Poll polls every CQ of the sweep in one crossing, writes into ready the
// indices (in NewSweep's order) of the CQs that have completions for
// GetWC, and returns how many it wrote (at most len(ready)). Its error
// reports the first CQ whose poll failed; that CQ's GetWC reports it too.
func (s *Sweep) Poll(ready []int) (int, error) { return (*core.Sweep)(s).Poll(ready) }

// Close releases the sweep's memory; the CQs are not touched. It is
// idempotent.
func (s *Sweep) Close() error { return (*core.Sweep)(s).Close() }
