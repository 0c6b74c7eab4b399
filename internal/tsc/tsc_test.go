package tsc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClockTracksWallTime: the counts over a sleep convert to the wall
// time the sleep took, and the counter never goes backwards.
func TestClockTracksWallTime(t *testing.T) {
	var c Clock
	c.Start()
	w := time.Now()
	a := Read()
	time.Sleep(20 * time.Millisecond)
	b := Read()
	wall := time.Since(w)
	c.Stop()
	require.GreaterOrEqual(t, b, a)
	d := c.Duration(b - a)
	require.InDelta(t, float64(wall), float64(d), float64(wall)/4, "%v of wall time read as %v", wall, d)
}

func BenchmarkRead(b *testing.B) {
	var s uint64
	for b.Loop() {
		s += Read()
	}
	_ = s
}
