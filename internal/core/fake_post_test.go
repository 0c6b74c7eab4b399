//go:build rpma_fake && linux

package core

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// The liveness probe and a grant's bind take their slots through the post
// protocol (post.go), as the data path does, and the send queue's and the
// CQ's accounting sees them as it sees any post: the probe holds its own
// slot beyond depth and the CQ entry kept for it, one probe at a time,
// and the user's queue still fills to its depth behind it; a probe or a
// bind the provider refuses is rolled back as a refused write is,
// leaving nothing behind.
func TestFakePostProtocol(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 4, 4
	prm.PeerTimeout = MaxPeerTimeout // the probe's slot, and no tick in the test's time
	client, _ := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	sq, budget := client.q.sq, &client.q.cq.budget
	d := client.dl
	type acct struct {
		posted, retired, high uint64
		unsignaled            int
		probing               bool
		used, cqHigh          int64
	}
	snap := func() acct {
		d.mu.Lock()
		defer d.mu.Unlock()
		return acct{sq.posted, sq.retired, sq.high, sq.unsignaled, sq.probing, budget.used, budget.high}
	}
	probe := func() error {
		d.mu.Lock()
		defer d.mu.Unlock()
		return client.probe()
	}

	// A probe outstanding: its slot is posted, beyond depth, with the CQ
	// entry kept for it; it moves no high-water mark. A second probe
	// while it is outstanding posts nothing.
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	before := snap()
	require.NoError(t, probe())
	after := snap()
	require.Equal(t, before.posted+1, after.posted, "the probe takes a slot")
	require.True(t, after.probing)
	require.Equal(t, before.posted, sq.probeSeq)
	require.Equal(t, before.used, after.used, "the probe's CQ entry is the one kept for it")
	require.Equal(t, before.high, after.high, "the probe's slot is beyond depth: no high-water mark counts it")
	require.NoError(t, probe())
	require.Equal(t, after, snap(), "one probe outstanding at a time")
	require.Equal(t, uint64(1), client.Stats().Probes)

	// Behind it the user's queue fills to its depth, and no further.
	for i := range prm.SQSize {
		require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, uint64(i)), "write %d behind the probe", i)
	}
	require.ErrorIs(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 99), rpma.ErrQueueFull)
	full := snap()
	require.Equal(t, uint64(prm.SQSize), full.high, "the queue's high-water mark: the writes, not the probe")
	require.Equal(t, int64(prm.SQSize), full.used, "the CQ budget: the writes' entries")
	st := client.Stats()
	require.Equal(t, uint64(1), st.QueueFull)
	require.Equal(t, prm.SQSize, st.SendQueueHighWater)
	require.Equal(t, prm.SQSize, st.CQ.HighWater)

	// A grant's bind refused for room is the queue's too (not counted in
	// QueueFull: it is the library's post, not the caller's).
	base, err := RegMR(p, make([]byte, 4096), UsageGranted|UsageWriteDst)
	require.NoError(t, err)
	defer base.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = client.Grant(ctx, base, 0, 64, UsageWriteDst)
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	require.Equal(t, full, snap(), "a refused bind takes nothing")
	require.Equal(t, uint64(1), client.Stats().QueueFull)

	// Released, the completions retire the probe's slot and the writes':
	// the budget is back where it was, the marks stay.
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	require.Equal(t, 1+prm.SQSize, client.q.qp.FakeRelease())
	for i := range prm.SQSize {
		wc := fakeWaitOne(t, client.CQ())
		require.NoError(t, wc.Err())
		require.Equal(t, uint64(i), wc.OpContext, "the probe's completion is the library's")
	}
	idle := snap()
	require.False(t, idle.probing)
	require.Equal(t, idle.posted, idle.retired)
	require.Equal(t, before.used, idle.used)

	// A probe or a bind the provider refuses is rolled back: the slot,
	// the probing mark, the CQ entry, the run of unsignaled requests.
	// An unsignaled write first, so that the run is not empty.
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionOnError, 7))
	ibv.InjectReset()
	defer ibv.InjectReset()
	ibv.InjectArm(injectSite(t, "POST_SEND"), 1, syscall.EIO)
	before = snap()
	require.Equal(t, 1, before.unsignaled)
	err = probe()
	require.True(t, ibv.InjectFired())
	var perr *probeError
	require.ErrorAs(t, err, &perr, "a probe the provider refuses loses the connection")
	require.Equal(t, before, snap(), "a refused probe takes nothing")
	ibv.InjectReset() // InjectArm counts from the last reset
	ibv.InjectArm(injectSite(t, "POST_SEND"), 1, syscall.ENOMEM)
	require.NoError(t, probe(), "a probe refused for room is tried again at the next tick")
	require.True(t, ibv.InjectFired())
	require.Equal(t, before, snap(), "a probe refused for room takes nothing")
	require.Equal(t, uint64(1), client.Stats().Probes)

	ibv.InjectReset()
	ibv.InjectArm(injectSite(t, "POST_SEND_BIND_MW"), 1, syscall.EIO)
	_, err = client.Grant(ctx, base, 0, 64, UsageWriteDst)
	require.True(t, ibv.InjectFired())
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.Equal(t, before, snap(), "a refused bind takes nothing")
	ibv.InjectReset()

	// Posted, a bind and a probe take their slots and go.
	g, err := client.Grant(ctx, base, 0, 64, UsageWriteDst)
	require.NoError(t, err)
	require.NoError(t, g.Revoke())
	require.NoError(t, probe())
	d.mu.Lock()
	client.q.cq.pollIntoStash("test")
	d.mu.Unlock()
	done := snap()
	require.Equal(t, before.posted+2, done.posted, "the bind's slot and the probe's")
	require.Equal(t, done.posted, done.retired)
	require.False(t, done.probing)
	require.Equal(t, 0, done.unsignaled, "signaled, both end the run")
	require.Equal(t, before.used-1, done.used, "the unsignaled write retired with them")
	require.Equal(t, uint64(2), client.Stats().Probes)
	require.NoError(t, client.Broken())
}
