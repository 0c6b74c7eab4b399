package core

import (
	"testing"
	"time"

	"github.com/gorpma/rpma/internal/tsc"

	"github.com/stretchr/testify/require"
)

// The yield clock: due at the first crossing, then once per yieldCounts;
// off with Tuning.NoYield.
func TestYieldDue(t *testing.T) {
	measure := yieldMeasure
	yieldMeasure = func() {}
	defer func() { yieldMeasure = measure }()
	yieldCounts := yieldCounts.Load()
	var d dataLock
	start := uint64(1) << 40
	require.True(t, d.yieldDue(start), "the first crossing yields")
	require.False(t, d.yieldDue(start+1))
	require.False(t, d.yieldDue(start+yieldCounts-1), "not before yieldCounts")
	require.True(t, d.yieldDue(start+yieldCounts))
	require.False(t, d.yieldDue(start+yieldCounts+1), "counted from the last yield")
	require.True(t, d.yieldDue(start+3*yieldCounts))

	// A counter read on another CPU may be a little behind: the
	// difference wraps, and the goroutine yields once more.
	require.True(t, d.yieldDue(start+3*yieldCounts-10))

	// A goroutine that has just blocked in a wait restarts the clock from
	// the counter's reading then. (Read against the counter's reading
	// after it, this was flaky: a VM's vCPU can be descheduled for the
	// 1-2 ms that yieldCounts is between the two.)
	var w dataLock
	w.blocked()
	require.NotZero(t, w.lastYield, "blocked read the counter")
	require.False(t, w.yieldDue(w.lastYield+1), "just scheduled")
	require.False(t, w.yieldDue(w.lastYield+yieldCounts-1))
	require.True(t, w.yieldDue(w.lastYield+yieldCounts))

	var off dataLock
	off.tune.NoYield = true
	for now := start; now < start+5*yieldCounts; now += yieldCounts / 2 {
		require.False(t, off.yieldDue(now))
	}
}

// The yield's period is a time: measured against the wall clock, the
// counts of tsc.Read it takes come to yieldPeriod, whatever the counter's
// rate (the guess, 4 million, is 1.5 ms only at 2.6 GHz, this host's
// rate: the test starts from 1 count instead).
func TestYieldPeriodIsWallClock(t *testing.T) {
	time.Sleep(20 * time.Millisecond) // the package's clock needs 10 ms
	var c tsc.Clock
	c.Start()
	time.Sleep(30 * time.Millisecond)
	yieldCounts.Store(1) // far from any rate's: measureYield must set it
	measureYield()
	c.Stop()
	got := c.Duration(yieldCounts.Load())
	t.Logf("yieldCounts %d: %v", yieldCounts.Load(), got)
	require.InDelta(t, float64(yieldPeriod), float64(got), float64(yieldPeriod)/4)
}
