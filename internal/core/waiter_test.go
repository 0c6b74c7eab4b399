//go:build linux

package core

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pipeWaiter is a waiter on the read end of a pipe: each byte written is
// an arrival, as an event is on a completion or rdma_cm channel.
type pipeWaiter struct {
	t  *testing.T
	w  *waiter
	rd int
	wr int
}

func newPipeWaiter(t *testing.T) *pipeWaiter {
	var fds [2]int
	require.NoError(t, syscall.Pipe(fds[:]))
	w, err := newWaiter(fds[0], "pipe")
	require.NoError(t, err)
	t.Cleanup(func() {
		w.close()
		syscall.Close(fds[0])
		syscall.Close(fds[1])
	})
	return &pipeWaiter{t: t, w: w, rd: fds[0], wr: fds[1]}
}

func (p *pipeWaiter) send() {
	_, err := syscall.Write(p.wr, []byte{1})
	require.NoError(p.t, err)
}

func (p *pipeWaiter) readByte() bool {
	var b [1]byte
	n, err := syscall.Read(p.rd, b[:])
	return n == 1 && err == nil
}

// broadcastWait is a completion wait's shape: read an arrival (holding
// the turn), record it for everyone.
func (p *pipeWaiter) broadcastWait(ctx context.Context) error {
	return p.broadcastWaitSince(ctx, p.w.epochNow())
}

// broadcastWaitSince is broadcastWait that began when epoch e was taken.
func (p *pipeWaiter) broadcastWaitSince(ctx context.Context, e epoch) error {
	return waitErr(p.w.wait(ctx, true, e, tryFunc(func() bool {
		if p.readByte() {
			p.w.arrived(0)
			return true
		}
		return false
	})))
}

// watchdog fails the test instead of hanging it.
func watchdog(t *testing.T, d time.Duration) {
	timer := time.AfterFunc(d, func() { panic("watchdog: " + t.Name() + " hung") })
	t.Cleanup(func() { timer.Stop() })
}

// TestWaitsIndependentDeadlines: a short deadline ends only its own wait;
// the long one goes on and returns nil on the next arrival (as the review
// reproduced for CQ.Wait: the 5 s wait returned DeadlineExceeded after
// 100 ms, when both shared one file deadline).
func TestWaitsIndependentDeadlines(t *testing.T) {
	watchdog(t, time.Minute)
	p := newPipeWaiter(t)
	for round := 0; round < 20; round++ {
		long, cancelLong := context.WithTimeout(context.Background(), 5*time.Second)
		short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
		longDone := make(chan error, 1)
		start := time.Now()
		e := p.w.epochNow()
		go func() { longDone <- p.broadcastWaitSince(long, e) }()
		err := p.broadcastWait(short)
		require.ErrorIs(t, err, context.DeadlineExceeded, "round %d", round)
		require.Less(t, time.Since(start), 2*time.Second)
		select {
		case err := <-longDone:
			t.Fatalf("round %d: the 5 s wait returned %v after %v, with the short one", round, err, time.Since(start))
		case <-time.After(50 * time.Millisecond):
		}
		p.send()
		select {
		case err := <-longDone:
			require.NoError(t, err, "round %d", round)
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the arrival did not end the long wait", round)
		}
		cancelLong()
		cancelShort()
	}
}

// TestWaitsIndependentCancellation: eight waiters cancelled at random
// times; each returns context.Canceled after its own cancel, never
// earlier, and a context.Background() waiter is never touched by them.
func TestWaitsIndependentCancellation(t *testing.T) {
	watchdog(t, 2*time.Minute)
	p := newPipeWaiter(t)
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 10; round++ {
		type res struct {
			err      error
			at       time.Time
			cancelAt time.Time
		}
		const n = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			results = make([]res, n)
		)
		bg := make(chan error, 1)
		e := p.w.epochNow()
		go func() { bg <- p.broadcastWaitSince(context.Background(), e) }()
		for i := 0; i < n; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			delay := time.Duration(rng.Intn(200)) * time.Millisecond
			wg.Add(2)
			go func() {
				defer wg.Done()
				err := p.broadcastWait(ctx)
				mu.Lock()
				results[i].err, results[i].at = err, time.Now()
				mu.Unlock()
			}()
			go func() {
				defer wg.Done()
				time.Sleep(delay)
				mu.Lock()
				results[i].cancelAt = time.Now()
				mu.Unlock()
				cancel()
			}()
		}
		wg.Wait()
		for i, r := range results {
			require.ErrorIs(t, r.err, context.Canceled, "round %d waiter %d", round, i)
			require.False(t, r.at.Before(r.cancelAt), "round %d waiter %d returned before its cancel", round, i)
		}
		select {
		case err := <-bg:
			t.Fatalf("round %d: the Background wait returned %v", round, err)
		default:
		}
		p.send()
		select {
		case err := <-bg:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("the arrival did not end the Background wait")
		}
	}
}

// TestBroadcastWakesEveryWaiter: one arrival ends every wait that began
// before it, whichever goroutine holds the turn.
func TestBroadcastWakesEveryWaiter(t *testing.T) {
	watchdog(t, time.Minute)
	p := newPipeWaiter(t)
	for _, n := range []int{2, 8, 32} {
		errs := make(chan error, n)
		e := p.w.epochNow() // the waits begin here, wherever their goroutines are
		for i := 0; i < n; i++ {
			go func() { errs <- p.broadcastWaitSince(context.Background(), e) }()
		}
		time.Sleep(10 * time.Millisecond) // some park, some are still on their way
		p.send()
		for i := 0; i < n; i++ {
			select {
			case err := <-errs:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				t.Fatalf("%d waiters: only %d returned after one arrival", n, i)
			}
		}
	}
}

// TestExclusiveWaitsShareArrivals: each arrival goes to exactly one of the
// exclusive waiters, and none is lost.
func TestExclusiveWaitsShareArrivals(t *testing.T) {
	watchdog(t, time.Minute)
	p := newPipeWaiter(t)
	const n = 8
	got := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { got <- waitErr(p.w.wait(context.Background(), false, epoch{}, tryFunc(p.readByte))) }()
	}
	for i := 0; i < n; i++ {
		p.send()
		select {
		case err := <-got:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("arrival %d woke nobody", i)
		}
		select {
		case <-got:
			t.Fatalf("arrival %d ended two exclusive waits", i)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestCloseWakesFollowers: close ends the parked wait and those waiting for
// the turn.
func TestCloseWakesFollowers(t *testing.T) {
	watchdog(t, time.Minute)
	p := newPipeWaiter(t)
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() { errs <- p.broadcastWait(context.Background()) }()
	}
	time.Sleep(50 * time.Millisecond)
	p.w.close()
	for i := 0; i < 4; i++ {
		select {
		case err := <-errs:
			require.True(t, errors.Is(err, os.ErrClosed), "%v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("close did not wake every waiter")
		}
	}
}

// TestWaiter checks the poller-backed wait on a pipe, which behaves like
// the rdma_cm and completion channel fds (non-blocking, pollable).
func TestWaiter(t *testing.T) {
	var fds [2]int
	require.NoError(t, syscall.Pipe(fds[:]))
	defer syscall.Close(fds[1])
	defer syscall.Close(fds[0])
	w, err := newWaiter(fds[0], "pipe")
	require.NoError(t, err)
	defer w.close()

	read := func() bool {
		var b [1]byte
		n, err := syscall.Read(fds[0], b[:])
		return n == 1 && err == nil
	}

	// Data ready: no wait.
	_, err = syscall.Write(fds[1], []byte{1})
	require.NoError(t, err)
	require.NoError(t, waitErr(w.wait(context.Background(), false, epoch{}, tryFunc(read))))

	// Data arriving later wakes the waiter.
	go func() {
		time.Sleep(20 * time.Millisecond)
		syscall.Write(fds[1], []byte{1})
	}()
	require.NoError(t, waitErr(w.wait(context.Background(), false, epoch{}, tryFunc(read))))

	// A deadline ends the wait with context.DeadlineExceeded.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = waitErr(w.wait(ctx, false, epoch{}, tryFunc(read)))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)

	// Cancellation ends the wait with context.Canceled, promptly.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start = time.Now()
	err = waitErr(w.wait(ctx, false, epoch{}, tryFunc(read)))
	require.ErrorIs(t, err, context.Canceled)
	t.Logf("cancel latency on a pipe: %v", time.Since(start)-20*time.Millisecond)

	// An already cancelled context returns at once, without reading.
	_, err = syscall.Write(fds[1], []byte{1})
	require.NoError(t, err)
	err = waitErr(w.wait(ctx, false, epoch{}, tryFunc(func() bool { t.Fatal("try called"); return true })))
	require.ErrorIs(t, err, context.Canceled)

	// The previous cancellation left no past deadline behind.
	require.NoError(t, waitErr(w.wait(context.Background(), false, epoch{}, tryFunc(read))))

	// close wakes a blocked wait with os.ErrClosed.
	go func() { time.Sleep(20 * time.Millisecond); w.close() }()
	err = waitErr(w.wait(context.Background(), false, epoch{}, tryFunc(read)))
	require.True(t, errors.Is(err, os.ErrClosed), "%v", err)
}

// TestIsAgainENODATA: librdmacm's non-blocking rdma_get_cm_event fails
// with ENODATA, not EAGAIN, when no event is pending (Linux only).
func TestIsAgainENODATA(t *testing.T) {
	require.True(t, isAgain(os.NewSyscallError("rdma_get_cm_event", syscall.ENODATA)))
}
