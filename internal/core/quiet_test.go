//go:build linux

package core

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// quietTryer is a completion wait's attempt on an epoll waiter of two
// eventfds: a "channel" (gated, as a completion channel is) and a watched
// one (as the connection's event fds are). An attempt consumes the
// channel's event, or finds the watched fd readable (an ended connection:
// readable for good), or finds stashed set (completions a post reaped).
type quietTryer struct {
	ch, watched int
	stashed     atomic.Bool
	tries       atomic.Int32
}

func (q *quietTryer) try() bool {
	q.tries.Add(1)
	var b [8]byte
	if n, err := syscall.Read(q.ch, b[:]); n == 8 && err == nil {
		return true
	}
	if n, err := syscall.Read(q.watched, b[:]); n == 8 && err == nil {
		signalEventFD(q.watched) // readable for good, as termFD
		return true
	}
	return q.stashed.Load()
}

func (q *quietTryer) result() tryResult { return tryResult{} }
func (q *quietTryer) quiet() bool       { return !q.stashed.Load() }

func newQuietWaiter(t *testing.T) (*waiter, *quietTryer) {
	ch, err := newEventFD()
	require.NoError(t, err)
	watched, err := newEventFD()
	require.NoError(t, err)
	w, err := newEpollWaiter("quiet", true, ch, watched)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.close()
		closeFD(ch)
		closeFD(watched)
	})
	return w, &quietTryer{ch: ch, watched: watched}
}

// waitQuiet runs one broadcast wait of q on w in a goroutine, bounded by d.
func waitQuiet(w *waiter, q *quietTryer, d time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := w.wait(ctx, true, w.epochNow(), q)
		done <- err
	}()
	return done
}

// requireEnds requires the wait done to end without an error within 10 s.
func requireEnds(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// TestQuietParkSleepsWithoutTrying: with nothing ready and nothing
// stashed, a park sleeps after one epoll_wait, without running the
// attempt (its system calls); the channel's event then wakes it, and one
// attempt reads it.
func TestQuietParkSleepsWithoutTrying(t *testing.T) {
	watchdog(t, time.Minute)
	w, q := newQuietWaiter(t)
	done := waitQuiet(w, q, 20*time.Second)
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, q.tries.Load(), "the park ran the attempt with nothing ready")
	signalEventFD(q.ch)
	requireEnds(t, done, "the channel's event did not wake the park")
	require.EqualValues(t, 1, q.tries.Load())
}

// TestQuietParkSeesReadinessFromBefore: an fd that became ready before
// the park, readiness the runtime's poller has already reported (the
// sleep lets it) and RawConn.Read then forgets, ends the park at once.
// This is the lost wake-up the first callback's epoll_wait prevents:
// with it returning false unconditionally, both cases wait out their
// 2-second context.
func TestQuietParkSeesReadinessFromBefore(t *testing.T) {
	watchdog(t, time.Minute)
	for _, tc := range []struct {
		name  string
		ready func(*quietTryer) int
	}{
		{"channel", func(q *quietTryer) int { return q.ch }},
		{"watched", func(q *quietTryer) int { return q.watched }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, q := newQuietWaiter(t)
			// A park arms the gate (the channel joins the epoll
			// instance) and disarms it only after reads without one;
			// arm it first, as an earlier park would have.
			require.NoError(t, w.gateArm())
			signalEventFD(tc.ready(q))
			time.Sleep(100 * time.Millisecond)
			requireEnds(t, waitQuiet(w, q, 2*time.Second), "wait hung")
			require.EqualValues(t, 1, q.tries.Load())
		})
	}
}

// TestQuietParkTriesWhenStashed: completions in the stash are announced by
// no fd, so a park whose tryer is not quiet runs the attempt first.
func TestQuietParkTriesWhenStashed(t *testing.T) {
	watchdog(t, time.Minute)
	w, q := newQuietWaiter(t)
	q.stashed.Store(true)
	requireEnds(t, waitQuiet(w, q, 2*time.Second), "wait hung")
	require.EqualValues(t, 1, q.tries.Load())
}

// TestFastPathSkippedWhileParksSleep: after sleepsMax parks in a row that
// slept (completions that come after the wait began), waits skip the fast
// path; a park that finds its event at the first look brings it back.
func TestFastPathSkippedWhileParksSleep(t *testing.T) {
	watchdog(t, time.Minute)
	w, q := newQuietWaiter(t)
	wait := func() { requireEnds(t, waitQuiet(w, q, 20*time.Second), "wait hung") }
	for i := 0; i < sleepsMax; i++ {
		require.True(t, w.fastDue(), "after %d sleeping parks", i)
		time.AfterFunc(50*time.Millisecond, func() { signalEventFD(q.ch) })
		wait()
	}
	require.False(t, w.fastDue(), "after %d sleeping parks", sleepsMax)
	signalEventFD(q.ch)
	wait()
	require.True(t, w.fastDue(), "after a park that found its event at once")
}
