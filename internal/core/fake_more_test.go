//go:build rpma_fake && linux

package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// A batch of writes lands, each with its Pending; a batch of reads brings
// the bytes back.
func TestFakeBatch(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, dst, remote := fakeRegions(t, p, 4096)
	for i := range src.Bytes() {
		src.Bytes()[i] = byte(i)
	}
	ctx := fakeCtx(t)
	var pends [4]Pending
	n, err := client.PostBatch(ctx, false, 4, func(i int) Transfer {
		return Transfer{Remote: remote, RemoteOff: i * 64, Local: src, LocalOff: i * 64, Len: 64}
	}, func(i int, p Pending) { pends[i] = p })
	require.NoError(t, err)
	require.Equal(t, 4, n)
	for _, p := range pends {
		_, err := p.Wait(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, src.Bytes()[:256], dst.Bytes()[:256])
	clear(src.Bytes())
	n, err = client.PostBatch(ctx, true, 2, func(i int) Transfer {
		return Transfer{Remote: remote, RemoteOff: i * 64, Local: src, LocalOff: i * 64, Len: 64}
	}, func(i int, p Pending) { pends[i] = p })
	require.NoError(t, err)
	require.Equal(t, 2, n)
	for _, p := range pends[:2] {
		_, err := p.Wait(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, dst.Bytes()[:128], src.Bytes()[:128])
}

// Receives posted to a shared receive queue serve the sends of two
// connections.
func TestFakeSRQ(t *testing.T) {
	p := fakePeer(t)
	s, err := NewSRQ(p, &SRQParams{RQSize: 8, RCQSize: 8})
	require.NoError(t, err)
	prm := DefaultConnParams()
	prm.SRQ = s
	client, server := fakePair(t, p, &prm)
	dst, err := RegMR(p, make([]byte, 256), UsageRecv)
	require.NoError(t, err)
	src, err := RegMR(p, []byte("via the srq"), UsageSend)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		require.NoError(t, s.Recv(dst, i*128, 128, uint64(20+i)))
	}
	ctx := fakeCtx(t)
	require.NoError(t, client.SendWait(ctx, src, 0, 11))
	require.NoError(t, server.SendWait(ctx, src, 0, 3))
	got := map[uint64]bool{}
	for i := 0; i < 2; i++ {
		wc := fakeWaitOne(t, s.RCQ())
		require.NoError(t, wc.Err())
		got[wc.OpContext] = true
	}
	require.Equal(t, map[uint64]bool{20: true, 21: true}, got)
	require.Equal(t, "via the srq", string(dst.Bytes()[:11]))
	_ = s.Stats()
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
	require.NoError(t, src.Close())
	require.NoError(t, dst.Close())
	require.NoError(t, s.Close())
}

// A grant binds a memory window over part of a region: the other side
// writes through it; revoked, its key no longer works.
func TestFakeGrant(t *testing.T) {
	p := fakePeer(t)
	client, server := fakePair(t, p, nil)
	base, err := RegMR(p, make([]byte, 4096), UsageGranted|UsageWriteDst|UsageReadSrc)
	require.NoError(t, err)
	defer base.Close()
	ctx := fakeCtx(t)
	g, err := server.Grant(ctx, base, 1024, 64, UsageWriteDst|UsageReadSrc)
	require.NoError(t, err)
	require.True(t, g.Live())
	d := g.Descriptor()
	remote, err := RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	src, err := RegMR(p, []byte("through a window"), UsageWriteSrc)
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, client.WriteWait(ctx, remote, 0, src, 0, 16))
	require.Equal(t, "through a window", string(base.Bytes()[1024:1040]))
	require.NoError(t, g.Revoke())
	require.False(t, g.Live())
	err = client.WriteWait(ctx, remote, 0, src, 0, 16)
	require.ErrorIs(t, err, rpma.ErrConnBroken, "a revoked window's key fails the write")
}

// With a peer timeout, a connection whose other side went silent (its QP
// in the error state: what arrives gets no answer) is reported lost: the
// outstanding write completes flushed, posts fail with ErrPeerTimeout.
func TestFakePeerTimeout(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.PeerTimeout = MinPeerTimeout
	client, server := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	require.NoError(t, server.q.qp.ToError())
	ctx := fakeCtx(t)
	start := time.Now()
	err := client.WriteWait(ctx, remote, 0, src, 0, 8)
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	require.GreaterOrEqual(t, time.Since(start), MinPeerTimeout/2)
	err = client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 1)
	require.ErrorIs(t, err, rpma.ErrPeerTimeout)
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnLost, ev)
}

// A connection with a shared completion channel and a receive CQ: its
// Wait says which CQ has completions.
func TestFakeSharedChannel(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SharedCompChannel = true
	prm.RCQSize = 8
	client, server := fakePair(t, p, &prm)
	src, err := RegMR(p, []byte("ping"), UsageSend)
	require.NoError(t, err)
	defer src.Close()
	dst, err := RegMR(p, make([]byte, 8), UsageRecv)
	require.NoError(t, err)
	defer dst.Close()
	require.NoError(t, server.Recv(dst, 0, 8, 5))
	require.NoError(t, client.Send(src, 0, 4, rpma.CompletionAlways, 6))
	ctx := fakeCtx(t)
	for _, c := range []*Conn{client, server} {
		var wc [1]WC
		for {
			q, _, err := c.Wait(ctx)
			require.NoError(t, err)
			if n, _ := q.GetWC(wc[:]); n == 1 {
				break
			}
		}
		require.NoError(t, wc[0].Err())
	}
	require.Equal(t, "ping", string(dst.Bytes()[:4]))
}

// Resizing the CQ keeps the connection working; the fake rounds sizes up
// as rxe does.
func TestFakeResizeAndStats(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	require.NoError(t, client.CQ().Resize(100))
	require.Equal(t, 127, client.CQ().Size())
	ctx := fakeCtx(t)
	for i := 0; i < 10; i++ {
		require.NoError(t, client.WriteWait(ctx, remote, 0, src, 0, 8))
	}
	st := client.Stats()
	require.NotZero(t, st)
	_ = client.CQ().Stats()
}

// Completions past the CQ's size overrun it: the fake raises
// IBV_EVENT_CQ_ERR as rxe does, and the library breaks the connection.
func TestFakeCQOverrun(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 64, 1
	client, _ := fakePair(t, p, &prm)
	size := client.CQ().Size()
	for i := 0; i < size+8; i++ {
		errno, _ := client.q.qp.PostSend(0, ibv.OpRDMAWrite, ibv.SendSignaled, 0, 0, 0, 0, 0, 0, ibv.Reap{})
		require.Zero(t, errno, "raw post %d", i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for client.Broken() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	err := client.Broken()
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	require.Contains(t, err.Error(), "IBV_EVENT_CQ_ERR")
}
