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
	if d.stats.ops[statWrite].posts != uint64(b.N) {
		b.Fatal("miscounted")
	}
}

// TestCQCounters: failures by status, and waits by how they ended.
func TestCQCounters(t *testing.T) {
	var s cqCounters
	s.failedWith(rpma.WCRemAccessErr)
	s.failedWith(999) // beyond the table
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
