package core

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// BenchmarkStatsPerPost is what the counters add to a post, natively: the
// post's count and bytes and the send queue's high-water mark (postSend),
// and the CQ's high-water mark (tryReserve), on a data lock.
func BenchmarkStatsPerPost(b *testing.B) {
	var d dataLock
	var budget cqBudget
	for i := range b.N {
		d.posted(statWrite, 64)
		d.queueHigh(uint64(i & 7))
		budget.used = int64(i & 7)
		budget.high = max(budget.high, budget.used)
	}
	if d.stats.posts[statWrite] != uint64(b.N) {
		b.Fatal("miscounted")
	}
}

// TestCQCounters: completions by status, received bytes, and waits by
// how they ended.
func TestCQCounters(t *testing.T) {
	var s cqCounters
	s.completed(&WC{Status: rpma.WCSuccess, ByteLen: 100}, true)
	s.completed(&WC{Status: rpma.WCSuccess, ByteLen: 100}, false)
	s.completed(&WC{Status: rpma.WCRemAccessErr}, false)
	s.completed(&WC{Status: 999}, true) // beyond the table
	require.EqualValues(t, 4, s.completions)
	require.EqualValues(t, 100, s.bytesReceived, "only a successful receive's length")
	require.EqualValues(t, 1, s.failed[rpma.WCRemAccessErr])
	require.EqualValues(t, 1, s.failed[rpma.WCGeneralErr])

	s.waited(nil)
	s.waited(fmt.Errorf("rpma: write_wait: %w", context.DeadlineExceeded))
	s.waited(errClosed("cq_wait", "CQ"))
	s.waited(&rpma.ConnEventError{Event: rpma.ConnLost})
	s.waited(rpma.ErrProvider)
	for i, want := range []uint64{1, 1, 1, 1, 1} {
		require.Equal(t, want, s.waits[i].Load(), "waits[%d]", i)
	}
}
