package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The yield clock: due at the first crossing, then once per yieldCounts;
// off when SetYielding(false).
func TestYieldDue(t *testing.T) {
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

	SetYielding(false)
	defer SetYielding(true)
	var off dataLock
	for now := start; now < start+5*yieldCounts; now += yieldCounts / 2 {
		require.False(t, off.yieldDue(now))
	}
}
