//go:build rpma_fake && linux

package core

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/rpma"
)

// The fake's tests of waits, again with every connection in WaitThread
// mode (fakePair checks that its connections park so): the contract of a
// wait does not depend on how it blocks.
func TestFakeThreadWaits(t *testing.T) {
	defer func(m WaitMode) { fakeWaitMode = m }(fakeWaitMode)
	fakeWaitMode = WaitThread
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"WaitFor", TestFakeWaitFor},
		{"WaitForRoom", TestFakeWaitForRoom},
		{"DisconnectEndsWaits", TestFakeDisconnectEndsWaits},
		{"HeldCompletionHoldsTheWait", TestFakeHeldCompletionHoldsTheWait},
		{"BrokenFlushes", TestFakeBrokenFlushes},
		{"CloseEndsWaits", TestFakeCloseEndsWaits},
		{"WaitingCallsTakeTurns", TestFakeWaitingCallsTakeTurns},
		{"RoomPromised", TestFakeRoomPromised},
		{"Disconnect", TestFakeDisconnect},
		{"WriteReadFlush", TestFakeWriteReadFlush},
		{"SendRecv", TestFakeSendRecv},
		{"SpinCatchesWithoutEvents", TestFakeSpinCatchesWithoutEvents},
		{"LazyParkArms", TestFakeLazyParkArms},
		{"SpinCatchesForWaitingCalls", TestFakeSpinCatchesForWaitingCalls},
		{"FDArmsForGood", TestFakeFDArmsForGood},
		{"EventsAckedInBatchesAndBeforeDestroy", TestFakeEventsAckedInBatchesAndBeforeDestroy},
		{"LazyArmFailure", TestFakeLazyArmFailure},
		{"StaleEventDoesNotEndAWait", TestFakeStaleEventDoesNotEndAWait},
		{"AbsorbedCompletionEndsAWait", TestFakeAbsorbedCompletionEndsAWait},
		{"AbsorbedAtArmingEndsAWait", TestFakeAbsorbedAtArmingEndsAWait},
		{"AbsorbedWhileArmedEndsAWait", TestFakeAbsorbedWhileArmedEndsAWait},
		{"AbsorbedAfterEventEndsAWait", TestFakeAbsorbedAfterEventEndsAWait},
	} {
		t.Run(tc.name, tc.test)
	}
}

// fakeThreadPair returns a client in WaitThread mode (and its server),
// with the client's completions held (FakeLater) and the client's CQ's
// thread parking.
func fakeThreadPair(t *testing.T, shared bool) (*Conn, *threadWait, *MR, *RemoteMR) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.WaitMode, prm.SharedCompChannel = WaitThread, shared
	client, _ := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	tw := client.q.cq.claimWaiter().thread
	require.NotNil(t, tw, "WaitThread: the waits block a thread")
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	return client, tw, src, remote
}

// A CQ.Wait in WaitThread mode blocks in epoll_wait until the completion
// comes; a context that ends returns its error, and the next wait is not
// cut short by that cancellation; Close ends a blocked wait with
// os.ErrClosed. Conn.Wait on a shared channel does the same.
func TestFakeThreadWaitBlocks(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "CQ.Wait", true: "Conn.Wait shared"}[shared], func(t *testing.T) {
			client, tw, src, remote := fakeThreadPair(t, shared)
			ctx := fakeCtx(t)
			wait := func(ctx context.Context) error {
				if shared {
					_, _, err := client.Wait(ctx)
					return err
				}
				return client.CQ().Wait(ctx)
			}

			// A completion held back: the wait blocks in epoll_wait.
			require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 7))
			done := make(chan error, 1)
			go func() { done <- wait(ctx) }()
			requireBlocked(t, done, "the completion is held back")
			require.Positive(t, tw.sleeps.Load(), "the wait blocked in epoll_wait")
			require.Equal(t, 1, ibv.FakeRelease())
			require.NoError(t, waitDone(t, done))
			require.Equal(t, uint64(1), tw.took.Load(), "the event was read in the crossing that waited")
			wc := fakeWaitOne(t, client.CQ())
			require.Equal(t, uint64(7), wc.OpContext)

			// Cancelled while blocked: ctx's error, promptly.
			require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 8))
			cctx, cancel := context.WithCancel(ctx)
			go func() { done <- wait(cctx) }()
			requireBlocked(t, done, "the completion is held back")
			cancel()
			require.ErrorIs(t, waitDone(t, done), context.Canceled)

			// A deadline likewise.
			dctx, dcancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer dcancel()
			go func() { done <- wait(dctx) }()
			require.ErrorIs(t, waitDone(t, done), context.DeadlineExceeded)

			// The cancellations are spent: the next wait blocks until
			// the completion comes.
			go func() { done <- wait(ctx) }()
			requireBlocked(t, done, "an earlier wait's cancellation must not end this one")
			require.Equal(t, 1, ibv.FakeRelease())
			require.NoError(t, waitDone(t, done))
			wc = fakeWaitOne(t, client.CQ())
			require.Equal(t, uint64(8), wc.OpContext)

			// Close ends a blocked wait.
			require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 9))
			go func() { done <- wait(ctx) }()
			requireBlocked(t, done, "the completion is held back")
			require.NoError(t, client.Close())
			require.ErrorIs(t, waitDone(t, done), os.ErrClosed)
		})
	}
}

// Many goroutines' waiting calls on one WaitThread connection each get
// their own completion; the holder of the turn blocks in epoll_wait.
func TestFakeThreadWaitingCalls(t *testing.T) {
	client, tw, src, remote := fakeThreadPair(t, false)
	ctx := fakeCtx(t)
	const g = 8
	done := make(chan error, g)
	for i := range g {
		go func() { done <- client.WriteWait(ctx, remote, i*8, src, 0, 8) }()
	}
	requireBlocked(t, done, "every completion is held back")
	require.Positive(t, tw.sleeps.Load())
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	ibv.FakeRelease()
	for range g {
		require.NoError(t, waitDone(t, done))
	}
}

// A WaitMode other than the two is refused before anything is made.
func TestFakeThreadWaitModeInvalid(t *testing.T) {
	prm := DefaultConnParams()
	prm.WaitMode = 2
	_, err := ResolveParams("conn_cfg", &prm)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorContains(t, err, "WaitMode 2")
}

// requireBlocked fails if done delivers within 100 ms.
func requireBlocked(t *testing.T, done <-chan error, why string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("the wait returned (%v) though %s", err, why)
	case <-time.After(100 * time.Millisecond):
	}
}

// waitDone returns what done delivers, failing after 10 s.
func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end")
		return nil
	}
}

// A wait that follows a wait, with no poll between, returns at once: the
// first wait read the event of a completion still in the CQ, so the
// second must poll before it parks, even though a poll emptied the CQ
// before (the drained state that lets a wait park without polling ends
// with each event read). In both wait modes, on a CQ and on a shared
// channel.
func TestFakeWaitAgainFindsUnpolled(t *testing.T) {
	for _, mode := range []WaitMode{WaitPoller, WaitThread} {
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("mode %d shared %v", mode, shared), func(t *testing.T) {
				p := fakePeer(t)
				prm := DefaultConnParams()
				prm.WaitMode, prm.SharedCompChannel = mode, shared
				client, _ := fakePair(t, p, &prm)
				src, _, remote := fakeRegions(t, p, 64)
				ctx := fakeCtx(t)
				wait := func(ctx context.Context) error {
					if shared {
						_, _, err := client.Wait(ctx)
						return err
					}
					return client.CQ().Wait(ctx)
				}
				wcs := make([]WC, 4)
				_, err := client.CQ().GetWC(wcs)
				require.ErrorIs(t, err, rpma.ErrNoCompletion, "a poll that empties the CQ")
				// Held until after the post, so that the post cannot reap it.
				client.q.qp.SetFakeTiming(ibv.FakeLater)
				require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 11))
				require.Equal(t, 1, ibv.FakeRelease())
				require.NoError(t, wait(ctx), "the event of the write")
				short, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				require.NoError(t, wait(short), "the completion is in the CQ: the second wait must find it")
				n, err := client.CQ().GetWC(wcs)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				require.Equal(t, uint64(11), wcs[0].OpContext)
			})
		}
	}
}

// A thread-mode waiter that cannot watch one of its fds (epoll_ctl fails)
// is refused with the call's error, and leaves no fd behind.
func TestFakeThreadWaitsRefused(t *testing.T) {
	p := fakePeer(t)
	ch, err := p.ctx.CreateCompChannel()
	require.NoError(t, err)
	defer ch.Destroy()
	w, err := newEpollWaiter("ibv_comp_channel", true, ch.FD())
	require.NoError(t, err)
	defer w.close()
	before := leak.OpenFDs()
	err = w.startThreadWaits(ch, 1<<20) // no such fd
	require.ErrorIs(t, err, syscall.EBADF)
	require.ErrorContains(t, err, "epoll_ctl")
	require.Nil(t, w.thread)
	require.Equal(t, before, leak.OpenFDs(), "the epoll instance and the eventfd are closed")
}
