package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/tsc"
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

	// A goroutine that has just blocked in a wait restarts the clock.
	var w dataLock
	w.blocked()
	require.False(t, w.yieldDue(tsc.Read()), "just scheduled")
	require.True(t, w.yieldDue(tsc.Read()+yieldCounts))

	SetYielding(false)
	defer SetYielding(true)
	var off dataLock
	for now := start; now < start+5*yieldCounts; now += yieldCounts / 2 {
		require.False(t, off.yieldDue(now))
	}
}
