package tsc

import "time"

// A Clock converts counts of Read into time: Start it before the measured
// run and Stop it after; Duration then scales by the counts per ns seen
// over the run. A run of a few milliseconds or more gives a rate good to
// a fraction of a percent.
type Clock struct {
	wall    time.Time
	count   uint64
	perNs   float64
	stopped bool
}

// Start records the wall clock and the counter.
func (c *Clock) Start() {
	c.wall, c.count, c.stopped = time.Now(), Read(), false
}

// Stop records the counter's rate over the time since Start.
func (c *Clock) Stop() {
	counts, ns := Read()-c.count, time.Since(c.wall).Nanoseconds()
	c.perNs, c.stopped = 1, true
	if ns > 0 && counts > 0 {
		c.perNs = float64(counts) / float64(ns)
	}
}

// Duration converts a difference of two Read values into time (Stop
// first; before it, counts are taken as ns).
func (c *Clock) Duration(counts uint64) time.Duration {
	if !c.stopped || c.perNs == 0 {
		return time.Duration(counts)
	}
	return time.Duration(float64(counts) / c.perNs)
}
