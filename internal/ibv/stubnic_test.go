//go:build rpma_stubnic && linux && cgo && !rpma_fake

package ibv_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
)

// newStub returns a stub NIC and a buffer of n completions, both freed
// when the test ends.
func newStub(tb testing.TB, depth, n int) (*ibv.StubNIC, *ibv.WCBuf) {
	tb.Helper()
	s, err := ibv.NewStubNIC(depth)
	require.NoError(tb, err)
	tb.Cleanup(s.Close)
	wcs, err := ibv.NewWCBuf(n)
	require.NoError(tb, err)
	tb.Cleanup(wcs.Free)
	return s, wcs
}

// The stub completes what the real wrappers post, through the provider
// ops that verbs.h's inlines dispatch to: a signaled post's completion
// is reaped in the post's crossing or polled after, with its wr_id,
// opcode and length; an unsignaled one makes none.
func TestStubNICCompletesPosts(t *testing.T) {
	s, wcs := newStub(t, 8, 4)
	qp, cq := s.QP, s.CQ

	errno, reaped := qp.PostSend(7, ibv.OpRDMAWrite, ibv.SendSignaled, 0x1000, 64, 1, 0x2000, 2, 0, ibv.Reap{})
	require.Zero(t, errno)
	require.Zero(t, reaped)
	got, err := cq.Poll(wcs, 0, 4)
	require.NoError(t, err)
	require.Equal(t, 1, got)
	wc := wcs.Slice()[0]
	require.Equal(t, uint64(7), wc.WRID)
	require.Equal(t, uint32(0), wc.Status)
	require.Equal(t, uint32(64), wc.ByteLen)
	require.Equal(t, uint32(0x11), wc.QPNum)

	errno, reaped = qp.PostSend(8, ibv.OpRDMARead, ibv.SendSignaled, 0x1000, 32, 1, 0x2000, 2, 0, cq.ReapInto(wcs, 0, 4))
	require.Zero(t, errno)
	require.Equal(t, 1, reaped, "the post's own crossing reaps its completion")
	require.Equal(t, uint64(8), wcs.Slice()[0].WRID)
	require.Equal(t, uint32(32), wcs.Slice()[0].ByteLen)

	errno, reaped = qp.PostSend(9, ibv.OpRDMAWrite, 0, 0x1000, 64, 1, 0x2000, 2, 0, cq.ReapInto(wcs, 0, 4))
	require.Zero(t, errno)
	require.Zero(t, reaped, "an unsignaled post completes nothing")

	errno, posted, reaped := qp.PostWriteRead(10, 0, 0x1000, 64, 1, 0x2000, 2, 11, ibv.SendSignaled, 0x3000, 3, 0x2000, cq.ReapInto(wcs, 0, 4))
	require.Zero(t, errno)
	require.Equal(t, 2, posted)
	require.Equal(t, 1, reaped)
	require.Equal(t, uint64(11), wcs.Slice()[0].WRID)
	require.Equal(t, uint32(8), wcs.Slice()[0].ByteLen)

	require.NoError(t, cq.ReqNotify(false))
	c := s.Counts()
	require.Equal(t, ibv.StubCounts{Posted: 5, Unsignaled: 2, Completed: 3, Polled: 3, Armed: 1}, c)
}

// The stub refuses as a provider does: ENOMEM when its CQ is full,
// EINVAL when the QP is not in RTS, and the post's wrapper reports it.
func TestStubNICRefuses(t *testing.T) {
	s, wcs := newStub(t, 2, 2)
	qp, cq := s.QP, s.CQ
	for i := range 2 {
		errno, _ := qp.PostSend(uint64(i), ibv.OpRDMAWrite, ibv.SendSignaled, 0, 0, 0, 0, 0, 0, ibv.Reap{})
		require.Zero(t, errno)
	}
	errno, _ := qp.PostSend(2, ibv.OpRDMAWrite, ibv.SendSignaled, 0, 0, 0, 0, 0, 0, ibv.Reap{})
	require.Equal(t, syscall.ENOMEM, errno)
	got, err := cq.Poll(wcs, 0, 2)
	require.NoError(t, err)
	require.Equal(t, 2, got)

	s.SetQPState(ibv.QPStateErr)
	errno, _ = qp.PostSend(3, ibv.OpRDMAWrite, ibv.SendSignaled, 0, 0, 0, 0, 0, 0, ibv.Reap{})
	require.Equal(t, syscall.EINVAL, errno)
	errno, posted, _ := qp.PostWriteRead(4, 0, 0, 0, 0, 0, 0, 5, ibv.SendSignaled, 0, 0, 0, ibv.Reap{})
	require.Equal(t, syscall.EINVAL, errno)
	require.Zero(t, posted)
	require.Equal(t, uint64(3), s.Counts().Refused)
}

// The C loops run librpma's calls on the stub and every operation
// completes with its own wr_id (the loop checks it and reports a
// mismatch as an error).
func TestStubNICCLoops(t *testing.T) {
	s, _ := newStub(t, 64, 1)
	for _, k := range []ibv.CLoopKind{ibv.CLoopWritePoll, ibv.CLoopReadPoll, ibv.CLoopPhased, ibv.CLoopRaw, ibv.CLoopNotify, ibv.CLoopWriteFlush, ibv.CLoopFlush, ibv.CLoopAtomicWrite, ibv.CLoopSend} {
		before := s.Counts()
		r := s.CLoop(k, 100, 32, -1)
		require.Zero(t, r.Err, "loop %d", k)
		after := s.Counts()
		if k == ibv.CLoopNotify {
			require.Equal(t, before.Armed+100, after.Armed)
			continue
		}
		require.Equal(t, before.Completed+100, after.Completed, "loop %d", k)
		require.Equal(t, after.Completed, after.Polled, "loop %d", k)
		if k == ibv.CLoopPhased {
			require.Positive(t, r.PostNS)
			require.Positive(t, r.PollNS)
		}
	}
}
