//go:build linux && cgo

package conn_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationStats: the counters of both sides after a known sequence
// of operations are exactly what the sequence did; reading them allocates
// nothing; a closed connection keeps them.
func TestIntegrationStats(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	ccfg := &conn.Config{RQSize: 1}
	client, server := pairCfg(t, p, e, ip, ccfg, nil, nil)
	dst, _ := region(t, p, 4096, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushVisibility|mr.UsageAtomicDst)
	rdst := extRemoteOf(t, dst)
	src, _ := region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend|mr.UsageRecv)
	in, _ := region(t, p, 64, mr.UsageRecv)

	// Before: nothing.
	require.Equal(t, rpma.ConnStats{}, client.Stats())

	for range 3 {
		require.NoError(t, client.WriteWait(ctx, rdst, 0, src, 0, 100))
	}
	for range 2 {
		require.NoError(t, client.ReadWait(ctx, src, 512, rdst, 0, 50))
	}
	require.NoError(t, client.FlushWait(ctx, rdst, 0, 64, rpma.FlushVisibility))
	require.NoError(t, client.WriteAndFlushWait(ctx, rdst, 1024, src, 0, 32, rpma.FlushVisibility))
	require.NoError(t, client.AtomicWriteWait(ctx, rdst, 2048, [8]byte{1}))
	_, err := client.CompareAndSwapWait(ctx, rdst, 2056, src, 1024, 0, 7)
	require.NoError(t, err)
	_, err = client.FetchAndAddWait(ctx, rdst, 2056, src, 1032, 1)
	require.NoError(t, err)
	require.NoError(t, server.Recv(in, 0, 32, 1))
	require.NoError(t, server.Recv(in, 32, 32, 2))
	require.NoError(t, client.SendWait(ctx, src, 0, 16))
	require.NoError(t, client.SendWait(ctx, src, 0, 16))
	// A receive queue of one: the second receive is refused for room.
	require.NoError(t, client.Recv(src, 2048, 64, 3))
	require.ErrorIs(t, client.Recv(src, 2048, 64, 4), rpma.ErrQueueFull)
	for i := range 2 {
		okWC(t, ctx, server.CQ(), rpma.WCRecv, uint64(i+1))
	}

	got := client.Stats()
	require.LessOrEqual(t, got.Yields, uint64(14), "yields: at most one per post")
	got.Yields = 0                                    // when they fall depends on the clock
	const completions = 3 + 2 + 1 + 1 + 1 + 1 + 1 + 2 // one per waiting call
	want := rpma.ConnStats{
		Writes: 3, Reads: 2, Sends: 2, Recvs: 1,
		FlushesVisibility: 1, WriteAndFlushesVisibility: 1,
		AtomicWrites: 1, CompareAndSwaps: 1, FetchAndAdds: 1,
		BytesWritten: 3*100 + 32, BytesRead: 2 * 50, BytesSent: 2 * 16,
		BytesFlushedVisibility: 64 + 32,
		QueueFull:              1,
		SendQueueHighWater:     2, // the write-and-flush's chain
		CQ: rpma.CQStats{
			Completions:    completions,
			WaitsCompleted: completions,
			HighWater:      2, // the chain's; the receive came after
		},
	}
	require.Equal(t, want, got)

	srv := server.Stats()
	require.Equal(t, uint64(2), srv.Recvs)
	require.Equal(t, uint64(32), srv.BytesReceived)
	require.Equal(t, uint64(2), srv.CQ.Completions)
	require.Zero(t, srv.Writes+srv.Reads+srv.Sends+srv.QueueFull+srv.CQ.Failed)
	require.Equal(t, server.CQ().Stats(), srv.CQ, "cq.CQ.Stats is the connection's CQ's")

	allocs := testing.AllocsPerRun(100, func() { _ = client.Stats() })
	require.Zero(t, allocs, "Stats allocates")

	// A closed connection keeps its counters; a nil one has none.
	require.NoError(t, client.Close())
	after := client.Stats()
	after.Yields = 0
	require.Equal(t, want, after)
	var none *conn.Conn
	require.Equal(t, rpma.ConnStats{}, none.Stats())
}
