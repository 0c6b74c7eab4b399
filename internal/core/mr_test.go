package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
)

// TestUsageToAccess is librpma's rpma_peer_usage2access, case by case.
func TestUsageToAccess(t *testing.T) {
	const (
		lw = ibv.AccessLocalWrite
		rw = ibv.AccessRemoteWrite
		rr = ibv.AccessRemoteRead
		fg = ibv.AccessFlushGlobal
		fp = ibv.AccessFlushPersistent
		ra = ibv.AccessRemoteAtomic
		mw = ibv.AccessMWBind
	)
	for _, tc := range []struct {
		usage              int
		nativeFlush, iwarp bool
		want               int
	}{
		{UsageReadSrc, false, false, rr},
		{UsageReadDst, false, false, lw},
		{UsageReadDst, false, true, lw | rw}, // iWARP's read writes into the sink
		{UsageWriteSrc, false, false, lw},
		{UsageWriteDst, false, false, rw | lw},
		{UsageFlushVisibility, false, false, rr}, // the emulated flush is a read
		{UsageFlushPersistent, false, false, rr},
		{UsageFlushVisibility, true, false, fg},
		{UsageFlushPersistent, true, false, fp},
		{UsageFlushVisibility | UsageFlushPersistent, true, false, fg | fp},
		{UsageFlushVisibility | UsageReadSrc, true, false, fg | rr},
		{UsageSend, false, false, 0},
		{UsageRecv, false, false, lw},
		{UsageWriteDst | UsageReadSrc | UsageFlushVisibility, false, false, rw | lw | rr},
		{UsageAtomicDst, false, false, ra | lw}, // this module's own
		{usageLibrpma, false, true, lw | rw | rr},
		{usageRemote, false, true, lw | rw | rr | ra},
		// Granted: the local bits and MW_BIND, never a remote one.
		{UsageGranted | UsageWriteDst | UsageReadSrc | UsageAtomicDst, false, false, lw | mw},
		{UsageGranted | UsageFlushPersistent, true, false, mw},
		{UsageGranted | UsageReadSrc, false, false, mw},
		{usageAll, false, true, lw | mw},
	} {
		require.Equal(t, tc.want, UsageToAccess(tc.usage, tc.nativeFlush, tc.iwarp), "%+v", tc)
	}
}

// TestRegionAccess: a region's flush usages serve flushers of both kinds:
// remote read always (emulated), the flush bits where the device has them
// (native), whatever the build.
func TestRegionAccess(t *testing.T) {
	const (
		lw   = ibv.AccessLocalWrite
		rw   = ibv.AccessRemoteWrite
		rr   = ibv.AccessRemoteRead
		fg   = ibv.AccessFlushGlobal
		fp   = ibv.AccessFlushPersistent
		mw   = ibv.AccessMWBind
		both = ibv.DeviceFlushGlobal | ibv.DeviceFlushPersistent
	)
	for _, tc := range []struct {
		usage       int
		nativeFlush bool
		caps        uint64
		want        int
	}{
		{UsageFlushVisibility, false, 0, rr},
		{UsageFlushPersistent, false, 0, rr},
		{UsageFlushVisibility, false, both, rr | fg},
		{UsageFlushPersistent, false, both, rr | fp},
		{UsageFlushPersistent, false, ibv.DeviceFlushGlobal, rr},
		{UsageFlushVisibility, true, both, rr | fg},
		{UsageFlushVisibility | UsageFlushPersistent, true, both, rr | fg | fp},
		{UsageWriteDst | UsageFlushVisibility, false, both, rw | lw | rr | fg},
		{UsageWriteDst, false, both, rw | lw}, // no flush usage: nothing added
		{UsageReadSrc, true, both, rr},
		// Granted: remote access only through windows (grants keep the
		// build's own rule, UsageToAccess).
		{UsageGranted | UsageWriteDst | UsageFlushPersistent, false, both, lw | mw},
		{UsageGranted | UsageFlushPersistent, true, both, mw},
	} {
		require.Equal(t, tc.want, RegionAccess(tc.usage, tc.nativeFlush, tc.caps, false), "%+v", tc)
	}
}

// TestSignalRule: unsignaled runs get every depth/2-th request signaled;
// a caller's signaled request restarts the run.
func TestSignalRule(t *testing.T) {
	for _, depth := range []int{1, 2, 10, 64} {
		q := newWorkQueue(depth, 0, &CQ{}, &qpState{}, errSQFull)
		every := max(1, depth/2)
		for i := 1; i <= 3*every; i++ {
			require.Equal(t, i%every == 0, q.signal(false), "depth %d, post %d", depth, i)
		}
		require.True(t, q.signal(true))
		if every > 1 {
			require.False(t, q.signal(false))
		}
	}
}

// TestWorkQueueAccounting: slots are taken on post and retired up to the
// completed sequence number, with the CQ budget following; the ring is a
// power of two whatever the depth.
func TestWorkQueueAccounting(t *testing.T) {
	c := &CQ{} // no stash: a full queue has nothing to poll
	c.budget.capacity = 5
	q := newWorkQueue(4, 0, c, &qpState{}, errSQFull)
	require.Len(t, q.ring, 4)
	for i := 0; i < 4; i++ {
		p, err := q.open(1)
		require.NoError(t, err)
		require.Equal(t, uint64(i), p.s)
		*p.record(0) = wrSlot{ctx: uint64(100 + i), user: i == 3}
	}
	_, err := q.reserve(1)
	require.ErrorIs(t, err, errSQFull)
	require.Equal(t, int64(4), c.budget.used)
	sl := q.complete(3) // the signaled one retires all four
	require.Equal(t, wrSlot{ctx: 103, user: true}, sl)
	require.Zero(t, q.outstanding())
	require.Zero(t, c.budget.used)

	// A rolled-back post gives its slot and its budget back.
	s, err := q.reserve(2)
	require.NoError(t, err)
	q.rollback(s+1, 1, 0)
	require.Equal(t, 1, q.outstanding())
	require.Equal(t, int64(1), c.budget.used)
	q.complete(s)

	// The CQ budget fills before a deeper queue.
	q2 := newWorkQueue(16, 0, c, &qpState{}, errSQFull)
	for i := 0; i < 5; i++ {
		_, err := q2.reserve(1)
		require.NoError(t, err)
	}
	_, err = q2.reserve(1)
	require.ErrorIs(t, err, errCQFull)

	for depth, ring := range map[int]int{1: 1, 2: 2, 3: 4, 10: 16, 16: 16, 17: 32} {
		require.Len(t, newWorkQueue(depth, 0, c, &qpState{}, errSQFull).ring, ring, "depth %d", depth)
	}
	for depth, ring := range map[int]int{1: 2, 3: 4, 4: 8, 15: 16, 16: 32} {
		require.Len(t, newWorkQueue(depth, 1, c, &qpState{}, errSQFull).ring, ring, "depth %d and the probe's slot", depth)
	}
}
