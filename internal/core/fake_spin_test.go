//go:build rpma_fake && linux

package core

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// The spin before a park and lazy arming (spin.go), on the fake, whose
// completions come when the test says.

// needTwoCPUs skips where the spin is off by design.
func needTwoCPUs(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		t.Skip("the spin is off with one CPU")
	}
}

// spinPair is a connected pair for the spin's tests (which need two
// CPUs) with a source region and the remote one on the client's side.
func spinPair(t *testing.T) (*Conn, *MR, *RemoteMR) {
	t.Helper()
	needTwoCPUs(t)
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	return client, src, remote
}

// fillSendQueue posts unsignaled writes on c, their completions held
// (FakeLater), until the send queue is full: the library's own signaled
// one among them (every SQSize/2-th) is the caller's to free it.
func fillSendQueue(t *testing.T, c *Conn, src *MR, remote *RemoteMR) {
	t.Helper()
	c.q.qp.SetFakeTiming(ibv.FakeLater)
	for i := 0; ; i++ {
		require.Less(t, i, 100, "the send queue filled")
		if err := c.Write(remote, 0, src, 0, 8, rpma.CompletionOnError, 0); err != nil {
			require.ErrorIs(t, err, rpma.ErrQueueFull)
			return
		}
	}
}

// spinRound posts a write whose completion comes at the n-th poll of the
// client's CQ from now, and waits for it with CQ.Wait and GetWC.
func spinRound(t *testing.T, c *Conn, src *MR, remote *RemoteMR, n int, opCtx uint64) {
	t.Helper()
	c.q.qp.SetFakeTiming(ibv.FakeLater)
	require.NoError(t, c.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, opCtx))
	c.q.qp.FakeReleaseAfterPolls(n)
	wc := fakeWaitOne(t, c.CQ())
	require.Equal(t, opCtx, wc.OpContext)
	require.NoError(t, wc.Err())
}

// channelReadable reports whether the CQ's completion channel has an
// event pending.
func channelReadable(t *testing.T, q *CQ) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(q.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	require.NoError(t, err)
	return n > 0
}

// A completion that comes while the wait spins ends the wait with no
// event read, none pending and the CQ left disarmed: no system call
// beyond the polls (on rxe and a NIC a poll is none).
func TestFakeSpinCatchesWithoutEvents(t *testing.T) {
	client, src, remote := spinPair(t)
	q := client.CQ()
	// The CQ is created armed: the first catch leaves an event, which a
	// later wait reads (without re-arming: the spin is on).
	for i := uint64(1); i <= 3; i++ {
		spinRound(t, client, src, remote, 3, i)
	}
	spins, caught, budget := SpinStats(q)
	require.NotZero(t, caught, "spins %d caught none", spins)
	require.Equal(t, DefaultSpinLimit, budget, "catches keep the budget at the limit")
	unacked := q.cq.Unacked()
	for i := uint64(10); i < 20; i++ {
		spinRound(t, client, src, remote, 3, i)
		require.False(t, q.cq.Armed(), "round %d: the CQ stays disarmed", i)
		require.False(t, channelReadable(t, q), "round %d: no event pending", i)
	}
	spins2, caught2, _ := SpinStats(q)
	require.Equal(t, caught+10, caught2, "every round caught by the spin (spins %d to %d)", spins, spins2)
	require.Equal(t, unacked, q.cq.Unacked(), "no event was read")
}

// A wait whose spin finds nothing arms the CQ before it parks, so the
// completion that comes later raises the park's event and ends it.
func TestFakeLazyParkArms(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	for i := uint64(10); i < 14; i++ {
		client.q.qp.SetFakeTiming(ibv.FakeLater)
		require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, i))
		done := make(chan error, 1)
		go func() { done <- q.Wait(fakeCtx(t)) }()
		// The park arms the CQ (and sleeps): the completion comes after.
		require.Eventually(t, q.cq.Armed, 5*time.Second, time.Millisecond, "round %d: the park armed the CQ", i)
		select {
		case err := <-done:
			t.Fatalf("round %d: the wait returned (%v) before the completion", i, err)
		case <-time.After(20 * time.Millisecond):
		}
		require.Equal(t, 1, client.q.qp.FakeRelease())
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the park slept through its completion", i)
		}
		wc := fakeWaitOne(t, q)
		require.Equal(t, i, wc.OpContext)
	}
	_, _, budget := SpinStats(q)
	require.Less(t, budget, DefaultSpinLimit, "each miss halved the spin")
}

// The waiting calls spin too: WriteWait's completion, coming while it
// spins, is caught with no event read.
func TestFakeSpinCatchesForWaitingCalls(t *testing.T) {
	client, src, remote := spinPair(t)
	q := client.CQ()
	ctx := fakeCtx(t)
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	round := func() {
		// The polls: the call's settle, its turn's settle, then the
		// spin's.
		client.q.qp.FakeReleaseAfterPolls(3)
		done := make(chan error, 1)
		go func() { done <- client.WriteWait(ctx, remote, 0, src, 0, 8) }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("WriteWait did not return")
		}
	}
	for i := 0; i < 3; i++ {
		round()
	}
	_, caught, _ := SpinStats(q)
	unacked := q.cq.Unacked()
	for i := 0; i < 5; i++ {
		round()
	}
	_, caught2, _ := SpinStats(q)
	require.GreaterOrEqual(t, caught2, caught+1, "the spin caught completions")
	require.Equal(t, unacked, q.cq.Unacked(), "no event was read")
}

// An event loop's CQ.FD arms the CQ for good: every completion raises an
// event, and TryWait re-arms.
func TestFakeFDArmsForGood(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	require.False(t, channelReadable(t, q))
	require.GreaterOrEqual(t, q.FD(), 0)
	require.True(t, q.cq.Armed(), "FD armed the CQ")
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	var wc [4]WC
	for i := uint64(10); i < 13; i++ {
		require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, i))
		require.True(t, channelReadable(t, q), "round %d: the completion raised an event", i)
		require.NoError(t, q.TryWait())
		require.True(t, q.cq.Armed(), "round %d: TryWait re-armed", i)
		n, err := q.GetWC(wc[:])
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, i, wc[0].OpContext)
	}
	// Wait reads the event and re-arms too now.
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 20))
	require.NoError(t, q.Wait(fakeCtx(t)))
	require.False(t, channelReadable(t, q))
	require.True(t, q.cq.Armed())
	require.Equal(t, uint64(20), fakeWaitOne(t, q).OpContext)
}

// Events are acknowledged sixteen at a time, and those left before the
// CQ is destroyed, which the fake (as rdma-core, that hangs) refuses
// with events unacknowledged.
func TestFakeEventsAckedInBatchesAndBeforeDestroy(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SpinLimit = NoSpin
	client, _ := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	q := client.CQ()
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	for i := 1; i <= 20; i++ {
		require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, uint64(i)))
		require.True(t, channelReadable(t, q))
		require.NoError(t, q.Wait(fakeCtx(t)))
		require.False(t, channelReadable(t, q), "the wait read the event")
		require.Equal(t, uint64(i), fakeWaitOne(t, q).OpContext)
		require.Equal(t, i%ackBatch, q.cq.Unacked(), "after %d events", i)
	}
	require.Equal(t, 4, q.cq.Unacked())
	fcq := q.cq
	require.NoError(t, client.Close())
	require.Zero(t, fcq.Unacked(), "acknowledged before the destroy")
}

// Arming before a park can fail: the wait returns the provider's error,
// naming ibv_req_notify_cq, and the next wait arms again.
func TestFakeLazyArmFailure(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	site := injectSite(t, "REQ_NOTIFY_CQ")
	ibv.InjectReset()
	ibv.InjectArm(site, 1, 12) // ENOMEM
	defer ibv.InjectReset()
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 7))
	err := q.Wait(fakeCtx(t))
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorContains(t, err, "ibv_req_notify_cq")
	require.True(t, ibv.InjectFired())
	require.False(t, q.cq.Armed())
	client.q.qp.FakeReleaseAfterPolls(1)
	require.Equal(t, uint64(7), fakeWaitOne(t, q).OpContext)
}

// The spinner alone: the budget doubles on a catch (to the limit),
// halves on a miss down to off, and comes back at the limit after
// spinRetry waits that parked; with one CPU there is none.
func TestSpinnerAdapts(t *testing.T) {
	needTwoCPUs(t)
	s := newSpinner(8 * time.Microsecond)
	require.True(t, s.on())
	yes := func() bool { return true }
	no := func() bool { return false }
	require.True(t, s.spin(yes))
	require.False(t, s.spin(no))
	require.Equal(t, 4*time.Microsecond, s.budget, "halved after a catch")
	require.True(t, s.spin(yes))
	require.Equal(t, 8*time.Microsecond, s.budget, "doubled to the limit")
	require.True(t, s.spin(yes))
	require.Equal(t, 8*time.Microsecond, s.budget, "no further")
	for s.on() {
		require.False(t, s.spin(no))
	}
	require.Zero(t, s.budget)
	// off: tried again after spinRetry parks (it caught before), then
	// after twice as many each time a try catches nothing.
	retries := []int{spinRetry, spinRetry, 2 * spinRetry, 4 * spinRetry}
	for k, n := range retries {
		for i := 1; i < n; i++ {
			require.False(t, s.spin(yes), "off: no spin")
		}
		require.False(t, s.spin(yes))
		require.True(t, s.on(), "try %d: tried again after %d parks", k, n)
		require.Equal(t, 8*time.Microsecond, s.budget)
		if k == 0 {
			require.True(t, s.spin(yes), "a catch")
		}
		for s.on() {
			require.False(t, s.spin(no))
		}
	}
	for s.retry < spinRetryMax {
		s.budget = s.limit
		require.False(t, s.spin(no))
		require.False(t, s.on(), "a probe that caught nothing turns the spin off")
	}
	require.Equal(t, spinRetryMax, s.retry, "at most")

	// The spin ends on time: a budget of 1 ms with nothing to catch.
	s = newSpinner(time.Millisecond)
	start := time.Now()
	require.False(t, s.spin(no))
	require.Less(t, time.Since(start), time.Second)

	s = newSpinner(0)
	require.False(t, s.on())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s = newSpinner(DefaultSpinLimit)
	require.False(t, s.on(), "one CPU: no spin")
}

// lazySteady brings c's CQ to the spin's steady state: disarmed, the
// spin on.
func lazySteady(t *testing.T, c *Conn, src *MR, remote *RemoteMR) *CQ {
	t.Helper()
	for i := uint64(1); i <= 3; i++ {
		spinRound(t, c, src, remote, 3, i)
	}
	q := c.CQ()
	require.False(t, q.cq.Armed(), "lazy")
	return q
}

// shortWait is q.Wait with a deadline of 50 ms.
func shortWait(q *CQ) error {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	return q.Wait(ctx)
}

// An event read while the spin is on may be stale (its completion was
// polled while the CQ was armed): it does not end a wait with nothing
// to poll, which goes on armed and ends at its deadline.
func TestFakeStaleEventDoesNotEndAWait(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	// Armed (as a park that found its completion at its arming leaves
	// it), then a completion that a post reaps: its event is stale.
	_, err := q.armForPark()
	require.NoError(t, err)
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 5))
	require.True(t, channelReadable(t, q), "a stale event is pending")
	require.Equal(t, uint64(5), fakeWaitOne(t, q).OpContext)
	require.ErrorIs(t, shortWait(q), context.DeadlineExceeded, "the stale event did not end the wait")
	require.False(t, channelReadable(t, q), "it was read")
	require.True(t, q.cq.Armed(), "the park armed the CQ")
}

// Completions the caller never sees (here the library's own signaled
// one of an unsignaled run, which frees the send queue) polled while the
// CQ is disarmed end the next wait, as their event would on an armed CQ:
// a loop that waits after a full queue and an empty GetWC goes on.
func TestFakeAbsorbedCompletionEndsAWait(t *testing.T) {
	client, src, remote := spinPair(t) // SQSize 10: every 5th unsignaled write is signaled
	q := lazySteady(t, client, src, remote)
	fillSendQueue(t, client, src, remote)
	require.False(t, q.cq.Armed())
	client.q.qp.FakeRelease()
	var wc [4]WC
	n, err := q.GetWC(wc[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "the library's completion is not the caller's")
	require.Zero(t, n)
	require.NoError(t, shortWait(q), "the absorbed completion ended the wait")
	require.ErrorIs(t, shortWait(q), context.DeadlineExceeded, "once")
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionOnError, 0), "room again")
}

// A completion the caller never sees that the arming before a park
// polls may have come before the arm, with no event: it ends the wait
// instead of leaving the park to sleep through it.
func TestFakeAbsorbedAtArmingEndsAWait(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	q.spin.budget = 0 // no spin polls: the polls below are counted
	fillSendQueue(t, client, src, remote)
	// The polls: GetWC's, the wait's before parking, the arming's.
	client.q.qp.FakeReleaseAfterPolls(3)
	var wc [4]WC
	_, err := q.GetWC(wc[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion)
	require.NoError(t, shortWait(q), "the completion polled at the arming ended the wait")
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionOnError, 0), "room again")
}

// A completion the caller never sees, polled (by GetWC) while the CQ was
// armed, raised an event: a wait that reads it lazily ends, as an armed
// CQ's event always ended a wait, instead of taking it for stale.
func TestFakeAbsorbedWhileArmedEndsAWait(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	fillSendQueue(t, client, src, remote)
	// Armed, as a park that found its completion at its arming leaves
	// it; the library's completion then raises an event.
	_, err := q.armForPark()
	require.NoError(t, err)
	client.q.qp.FakeRelease()
	require.True(t, channelReadable(t, q))
	var wc [4]WC
	_, err = q.GetWC(wc[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "the library's completion is not the caller's")
	require.NoError(t, shortWait(q), "its event ended the wait")
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionOnError, 0), "room again")
}

// An event read first, whose completion (the library's own) the wait's
// poll after it then absorbs, ends the wait: the event was for it.
func TestFakeAbsorbedAfterEventEndsAWait(t *testing.T) {
	client, src, remote := spinPair(t)
	q := lazySteady(t, client, src, remote)
	q.spin.budget, q.spin.retry = 0, spinRetryMax // the spin off, as after a failed probe
	fillSendQueue(t, client, src, remote)
	_, err := q.armForPark()
	require.NoError(t, err)
	client.q.qp.FakeRelease()
	require.True(t, channelReadable(t, q))
	require.NoError(t, shortWait(q), "the event and the completion it announced ended the wait")
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionOnError, 0), "room again")
}
