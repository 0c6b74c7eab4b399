package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCQTake: completions leave the stash in order, as many as fit, and
// what stays moves to its front, whether one, some or all are taken.
func TestCQTake(t *testing.T) {
	stash := func(ids ...uint64) *CQ {
		q := &CQ{stash: make([]WC, 4)}
		for i, id := range ids {
			q.stash[i].OpContext = id
		}
		q.n = len(ids)
		return q
	}
	ids := func(wc []WC) []uint64 {
		var out []uint64
		for _, w := range wc {
			out = append(out, w.OpContext)
		}
		return out
	}

	q := stash(1, 2, 3)
	wc := make([]WC, 1)
	require.Equal(t, 1, q.take(wc))
	require.Equal(t, []uint64{1}, ids(wc))
	require.Equal(t, []uint64{2, 3}, ids(q.stash[:q.n]))

	wc = make([]WC, 8)
	require.Equal(t, 2, q.take(wc))
	require.Equal(t, []uint64{2, 3}, ids(wc[:2]))
	require.Zero(t, q.n)

	q = stash(7)
	require.Equal(t, 1, q.take(wc))
	require.Equal(t, uint64(7), wc[0].OpContext)
	require.Zero(t, q.n)

	q = stash(4, 5, 6, 7)
	wc = make([]WC, 3)
	require.Equal(t, 3, q.take(wc))
	require.Equal(t, []uint64{4, 5, 6}, ids(wc))
	require.Equal(t, []uint64{7}, ids(q.stash[:q.n]))
}
