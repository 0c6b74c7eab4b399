//go:build rpma_fake && linux

package core

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// CQ.WaitFor takes the completion of its op context only, and only once
// it came; the others stay for GetWC.
func TestFakeWaitFor(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	a := rpma.CompletionAlways
	require.NoError(t, client.Write(remote, 0, src, 0, 8, a, 1))
	require.NoError(t, client.Write(remote, 8, src, 0, 8, a, 2))
	ctx := fakeCtx(t)
	got := make(chan WC, 1)
	go func() {
		wc, err := client.CQ().WaitFor(ctx, 2)
		if err != nil {
			wc.OpContext = 0
		}
		got <- wc
	}()
	select {
	case <-got:
		t.Fatal("WaitFor returned before the completion came")
	case <-time.After(100 * time.Millisecond):
	}
	require.ErrorIs(t, client.CQ().TryWait(), rpma.ErrNoCompletion, "nothing came yet")
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	require.Equal(t, 2, client.q.qp.FakeRelease())
	require.Equal(t, uint64(2), (<-got).OpContext)
	wc := fakeWaitOne(t, client.CQ())
	require.Equal(t, uint64(1), wc.OpContext, "the other completion stays for GetWC")
}

// A waiting call on a full send queue waits for room, and gets it when a
// completion frees a slot.
func TestFakeWaitForRoom(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 2, 2
	client, _ := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	ctx := fakeCtx(t)
	var ps []Pending
	for i := 0; i < prm.SQSize; i++ {
		pd, err := client.WriteAsync(ctx, remote, 0, src, 0, 8)
		require.NoError(t, err, "async post %d", i)
		ps = append(ps, pd)
	}
	done := make(chan error, 1)
	go func() { done <- client.WriteWait(ctx, remote, 8, src, 0, 8) }()
	select {
	case err := <-done:
		t.Fatalf("WriteWait returned (%v) with the queue full", err)
	case <-time.After(100 * time.Millisecond):
	}
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	ibv.FakeRelease()
	for _, pd := range ps {
		_, err := pd.Wait(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, <-done)
}

// The other side's disconnect ends the waits of operations that never
// complete: with ErrConnBroken once the flush is in.
func TestFakeDisconnectEndsWaits(t *testing.T) {
	p := fakePeer(t)
	client, server := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeNever)
	ctx := fakeCtx(t)
	done := make(chan error, 2)
	go func() { done <- client.WriteWait(ctx, remote, 0, src, 0, 8) }()
	go func() {
		_, err := client.CQ().WaitFor(ctx, 5)
		done <- err
	}()
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 5))
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, server.Disconnect())
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			require.ErrorIs(t, err, rpma.ErrConnBroken)
		case <-ctx.Done():
			t.Fatal("a wait did not end")
		}
	}
	ev, err := client.TryNextEvent()
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
}

// The accessors and the non-blocking forms.
func TestFakeAccessors(t *testing.T) {
	p := fakePeer(t)
	e, err := Listen(p, fakeIP, "0", nil)
	require.NoError(t, err)
	defer e.Close()
	require.Equal(t, fakeIP, e.Addr().Addr().String())
	require.GreaterOrEqual(t, e.FD(), 0)
	_, err = e.TryNextConnReq(nil)
	require.ErrorIs(t, err, rpma.ErrNoEvent)
	require.Zero(t, e.Undecided())
	require.Zero(t, e.Establishing())
	require.Zero(t, e.Refused())

	client, server := fakePair(t, p, nil)
	require.True(t, server.IsPassive())
	require.False(t, client.IsPassive())
	require.Equal(t, server.LocalAddr().Port(), client.PeerAddr().Port())
	require.False(t, client.NativeAtomicWrite())
	require.False(t, client.NativeFlush())
	require.Nil(t, client.SRQ())
	require.False(t, client.DirectWriteToPMem())
	require.False(t, client.CQ().IsShared())
	_, err = client.TryNextEvent()
	require.ErrorIs(t, err, rpma.ErrNoEvent)
	_, _, err = client.TryWait()
	require.Error(t, err, "no shared channel")
	fd, err := client.CompFD()
	require.Error(t, err)
	require.Equal(t, -1, fd)
	require.GreaterOrEqual(t, client.EventFD(), 0)

	m, err := RegMR(p, make([]byte, 128), UsageWriteDst|UsageFlushVisibility)
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 128, m.Size())
	require.NotZero(t, m.Addr())
	require.Equal(t, UsageWriteDst|UsageFlushVisibility, m.Usage())
	require.NotZero(t, m.Access())
	require.False(t, m.ODP())
	require.NoError(t, m.Advise(0, 64, ibv.AdvisePrefetchWrite, ibv.AdviseFlagFlush))
	d := m.Descriptor()
	r, err := RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	require.Equal(t, uint64(128), r.Size())
	require.Equal(t, m.Usage(), r.Usage())
	require.Equal(t, m.Addr(), r.Addr())
	_ = r.FlushType()
}

// The waiting calls take turns: where every operation completes inside
// its post (the fake's FakeNow, 6.1's loopback rxe), no call parks, and a
// goroutine looping on calls would keep its P for a whole time slice
// while the others wait. With the turn-taking (runWait's yield), between
// two of one goroutine's calls the others complete a bounded number of
// theirs. Counted in calls, not timed; on one P, so that the turns are
// the scheduler's run queue's alone (with two, a goroutine can also wait
// on the data lock, which sync.Mutex bounds at 1 ms by its starvation
// mode).
func TestFakeWaitingCallsTakeTurns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const (
		G     = 8
		calls = 200
		// The most calls of others between two of one goroutine's: about
		// G-1 when the turns go round; a goroutine that kept its P makes
		// the others wait for hundreds.
		maxGap = 8 * G
	)
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 8*G)
	ctx := fakeCtx(t)
	var (
		seq  atomic.Int64
		wg   sync.WaitGroup
		seqs [G][]int64
		errs [G]error
	)
	start := make(chan struct{})
	for g := range G {
		wg.Go(func() {
			<-start
			for range calls {
				if err := client.WriteWait(ctx, remote, 8*g, src, 8*g, 8); err != nil {
					errs[g] = err
					return
				}
				seqs[g] = append(seqs[g], seq.Add(1))
			}
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs[:]...))
	// From the moment every goroutine has made its first call: before
	// it, the goroutines not yet scheduled are not calling, and the
	// others need not wait for them.
	begun := int64(0)
	for g := range G {
		begun = max(begun, seqs[g][0])
	}
	worst := int64(0)
	for g := range G {
		for i := 1; i < len(seqs[g]); i++ {
			if seqs[g][i-1] >= begun {
				worst = max(worst, seqs[g][i]-seqs[g][i-1]-1)
			}
		}
	}
	t.Logf("the most calls of others between two of one goroutine's: %d (G=%d)", worst, G)
	require.LessOrEqual(t, worst, int64(maxGap), "a goroutine waited behind %d calls of others", worst)
}

// A call woken for room keeps that room until it posts: a waiting call
// that starts between the wake-up and the woken call's post queues behind
// it rather than take the room, which would send the woken call back to
// the queue for another wake-up (doc/goroutines.md: 1.2 to 2.9 wake-ups
// for room per operation at G=64 on 6.12 before). With one P the woken
// goroutine runs only once the main goroutine blocks, so the main
// goroutine's call comes in between: it must not post, and its context
// ends with nothing posted. Without the promise it posts first, its
// context's end reports an unknown outcome, and the woken call is refused
// for room.
func TestFakeRoomPromised(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SQSize = 1
	client, _ := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	ctx := fakeCtx(t)
	first, err := client.WriteAsync(ctx, remote, 0, src, 0, 8)
	require.NoError(t, err)
	woken := make(chan error, 1)
	go func() { woken <- client.WriteWait(ctx, remote, 8, src, 0, 8) }()
	for deadline := time.Now().Add(10 * time.Second); client.cq.roomWaiters.Load() == 0; {
		require.True(t, time.Now().Before(deadline), "the second call never queued for room")
		runtime.Gosched()
	}
	// The first request completes; the poll of its wait wakes the queued
	// call for room, which does not run yet.
	require.Equal(t, 1, client.q.qp.FakeRelease())
	_, err = first.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, int32(1), client.cq.promising.Load(), "the queued call was not woken for room")
	full := client.Stats().QueueFull
	late, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err = client.WriteWait(late, remote, 16, src, 0, 8)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, rpma.ErrOutcomeUnknown, "the later call posted ahead of the one woken for room")
	require.Equal(t, full, client.Stats().QueueFull, "the call woken for room was refused for room")
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	client.q.qp.FakeRelease()
	select {
	case err := <-woken:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("the call woken for room never returned")
	}
	require.Zero(t, client.cq.promising.Load(), "a promise outlived its post")
	require.Equal(t, [2]uint64{}, client.cq.promised)
	requireQueueIdle(t, client)
}
