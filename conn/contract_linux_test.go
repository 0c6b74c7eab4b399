//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

// The tests of the wait contract (package cq's documentation) and of
// Close racing everything else, on real rxe.

// returnBound is how long after its own context ends (or after the
// arrival that should end it) a wait may take to return, under TCG.
const returnBound = 3 * time.Second

// waitTarget is one kind of wait on one channel, with the way to make a
// completion arrive on it and to poll it away afterwards.
type waitTarget struct {
	name   string
	wait   func(ctx context.Context) (*cq.CQ, error) // the CQ it reports, when it can tell
	arrive func(round int) *cq.CQ                    // the CQ the arrival lands on
	drain  func(round int)                           // after the round, with every waiter returned
}

// waiterResult is what one waiter of a round saw.
type waiterResult struct {
	err       error
	q         *cq.CQ
	ownDone   bool      // its own context was done when it returned
	returned  time.Time // when the wait returned
	endsAt    time.Time // when its own context ends (zero: long after the round)
	cancelled bool      // its context is cancelled rather than timed out
}

// runWaitRounds runs rounds of n waiters (n cycling through 2, 8 and 32)
// on target, each with its own deadline or cancellation (some long,
// ended only by the arrival), makes one completion arrive in the middle
// of the round, and checks every waiter against the contract.
func runWaitRounds(t *testing.T, target waitTarget, rounds int) {
	rng := rand.New(rand.NewSource(int64(len(target.name))))
	counts := map[string]int{}
	for round := 0; round < rounds; round++ {
		n := []int{2, 8, 32}[round%3]
		start := time.Now()
		arriveAfter := 20 * time.Millisecond
		results := make([]waiterResult, n)
		var wg sync.WaitGroup
		cancels := make([]context.CancelFunc, n)
		for i := 0; i < n; i++ {
			var ctx context.Context
			r := &results[i]
			switch rng.Intn(3) {
			case 0: // a deadline before or after the arrival
				d := time.Duration(1+rng.Intn(40)) * time.Millisecond
				ctx, cancels[i] = context.WithTimeout(context.Background(), d)
				r.endsAt = start.Add(d)
			case 1: // cancelled at a random time
				d := time.Duration(1+rng.Intn(40)) * time.Millisecond
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(context.Background())
				cancels[i] = cancel
				r.endsAt, r.cancelled = start.Add(d), true
				time.AfterFunc(d, cancel)
			default: // long: only the arrival ends it
				ctx, cancels[i] = context.WithTimeout(context.Background(), time.Minute)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				q, err := target.wait(ctx)
				r.returned = time.Now()
				r.err, r.q, r.ownDone = err, q, ctx.Err() != nil
			}()
		}
		time.Sleep(arriveAfter)
		arrivedAt := time.Now()
		arrivedOn := target.arrive(round)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s round %d (%d waiters): waits did not return within a minute", target.name, round, n)
		}
		for i, r := range results {
			what := fmt.Sprintf("%s round %d waiter %d/%d", target.name, round, i, n)
			switch {
			case r.err == nil:
				// Nil is allowed at any time (a spurious wake-up); after
				// the arrival it must name the arrival's CQ.
				counts["nil"]++
				if r.q != nil && !r.returned.Before(arrivedAt) {
					require.Same(t, arrivedOn, r.q, "%s: reports the CQ of the arrival", what)
				}
			case errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, context.Canceled):
				counts["ctx"]++
				require.True(t, r.ownDone, "%s: returned %v while its own context was not done", what, r.err)
				require.False(t, r.endsAt.IsZero(), "%s: a long wait returned %v", what, r.err)
				require.Less(t, r.returned.Sub(r.endsAt), returnBound, "%s: returned %v late", what, r.err)
				if r.cancelled {
					require.ErrorIs(t, r.err, context.Canceled, what)
				} else {
					require.ErrorIs(t, r.err, context.DeadlineExceeded, what)
				}
			default:
				t.Fatalf("%s: unexpected error %v", what, r.err)
			}
			if r.endsAt.IsZero() || r.endsAt.After(arrivedAt.Add(returnBound)) {
				// Its context outlived the arrival: the arrival ends it.
				require.NoError(t, r.err, "%s: the arrival did not end it", what)
				require.Less(t, r.returned.Sub(arrivedAt), returnBound, "%s: returned late after the arrival", what)
			}
		}
		for _, c := range cancels {
			c()
		}
		target.drain(round)
	}
	t.Logf("%s: %d rounds, %d waits ended by an arrival, %d by their own context", target.name, rounds, counts["nil"], counts["ctx"])
}

// drainCQ polls q until it is empty.
func drainCQ(t *testing.T, q *cq.CQ) {
	var wcs [16]cq.WC
	for {
		_, err := q.GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			return
		}
		require.NoError(t, err)
	}
}

// awaitWC polls q until the completion of wrID comes (all others are
// dropped), for at most returnBound.
func awaitWC(t *testing.T, q *cq.CQ, wrID uint64) {
	var wcs [16]cq.WC
	for end := time.Now().Add(returnBound); time.Now().Before(end); {
		n, err := q.GetWC(wcs[:])
		if !errors.Is(err, rpma.ErrNoCompletion) {
			require.NoError(t, err)
		}
		for _, wc := range wcs[:n] {
			require.NoError(t, wc.Err())
			if wc.OpContext == wrID {
				drainCQ(t, q)
				return
			}
		}
	}
	t.Fatalf("the completion of %d did not come within %v", wrID, returnBound)
}

// drainChannel reads the completion events left on c's shared channel and
// returns how many there were. A round whose waiters all returned before
// its completion arrived leaves that completion's event unread; the next
// round's first wait would read it and report its CQ, a stale (but, as in
// librpma, legitimate) event that is not the next round's arrival.
func drainChannel(t *testing.T, c *conn.Conn) int {
	for n := 0; ; n++ {
		_, _, err := c.TryWait()
		if errors.Is(err, rpma.ErrNoCompletion) {
			return n
		}
		require.NoError(t, err)
		require.Less(t, n, 4, "events keep coming on an idle channel")
	}
}

// TestIntegrationIndependentWaits: 2, 8 and 32 goroutines waiting on one
// CQ, on one shared completion channel and on one SRQ's receive CQ, each
// with its own deadline or cancellation, 100 rounds each: a wait returns
// its own context's error only when its own context is done, and returns
// nil when the round's completion arrives before that.
func TestIntegrationIndependentWaits(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	const rounds = 100

	t.Run("CQ", func(t *testing.T) {
		client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
		runWaitRounds(t, cqWaitTarget(t, client), rounds)
	})

	t.Run("shared channel", func(t *testing.T) {
		staleEvents := 0
		client, server := pairCfg(t, p, e, ip, rcqConfig(true), nil, nil)
		runWaitRounds(t, sharedWaitTarget(t, client, server, &staleEvents), rounds)
		t.Logf("channel events left unread at the end of a round: %d", staleEvents)
	})

	t.Run("SRQ receive CQ", func(t *testing.T) {
		s, err := srq.New(p, &srq.Config{RQSize: 8, RCQSize: 8})
		require.NoError(t, err)
		scfg := conn.DefaultConfig()
		scfg.SRQ = s
		client, server := pairCfg(t, p, e, ip, nil, scfg, nil)
		t.Cleanup(func() {
			require.NoError(t, server.Close())
			require.NoError(t, s.Close())
		})
		q := s.RCQ()
		runWaitRounds(t, waitTarget{
			name: "SRQ receive CQ",
			wait: func(ctx context.Context) (*cq.CQ, error) { return nil, q.Wait(ctx) },
			arrive: func(round int) *cq.CQ {
				require.NoError(t, s.Recv(nil, 0, 0, uint64(round)))
				require.NoError(t, client.Send(nil, 0, 0, rpma.CompletionOnError, 0))
				return q
			},
			drain: func(round int) { awaitWC(t, q, uint64(round)) },
		}, rounds)
	})
}

// cqWaitTarget is client's CQ waits (cq.CQ.Wait), a round's arrival a
// zero-length write's completion.
func cqWaitTarget(t *testing.T, client *conn.Conn) waitTarget {
	q := client.CQ()
	return waitTarget{
		name: "CQ",
		wait: func(ctx context.Context) (*cq.CQ, error) { return nil, q.Wait(ctx) },
		arrive: func(round int) *cq.CQ {
			require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(round)))
			return q
		},
		drain: func(round int) { awaitWC(t, q, uint64(round)) },
	}
}

// sharedWaitTarget is client's waits on its shared completion channel
// (conn.Conn.Wait), a round's arrival on the CQ (a write's completion) or
// the receive CQ (server's send) in turn; staleEvents counts the channel
// events left unread at the end of each round.
func sharedWaitTarget(t *testing.T, client, server *conn.Conn, staleEvents *int) waitTarget {
	return waitTarget{
		name: "shared channel",
		wait: func(ctx context.Context) (*cq.CQ, error) {
			q, _, err := client.Wait(ctx)
			return q, err
		},
		arrive: func(round int) *cq.CQ {
			if round%2 == 0 {
				require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(round)))
				return client.CQ()
			}
			require.NoError(t, client.Recv(nil, 0, 0, uint64(round)))
			require.NoError(t, server.Send(nil, 0, 0, rpma.CompletionOnError, 0))
			return client.RCQ()
		},
		drain: func(round int) {
			// The round's completion may land after every waiter
			// returned; wait for it, so that neither it nor its event
			// spills into the next round.
			arrivedOn, other := client.CQ(), client.RCQ()
			if round%2 == 1 {
				arrivedOn, other = other, arrivedOn
			}
			awaitWC(t, arrivedOn, uint64(round))
			drainCQ(t, other)
			*staleEvents += drainChannel(t, client)
		},
	}
}

// connectPair connects a client to e without registering cleanups: the
// caller closes both.
func connectPair(t *testing.T, p *peer.Peer, e *ep.Endpoint, ip string, ccfg, scfg *conn.Config) (client, server *conn.Conn) {
	t.Helper()
	ctx := testCtx(t)
	srv := accept(ctx, e, scfg, nil)
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), ccfg)
	require.NoError(t, err)
	client, err = req.Connect(nil)
	require.NoError(t, err)
	r := <-srv
	require.NoError(t, r.err)
	server = r.v
	for _, c := range []*conn.Conn{client, server} {
		ev, err := c.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev)
	}
	return client, server
}

// TestIntegrationCloseRaces: Close racing posts, GetWC, CQ waits and
// NextEvent from other goroutines, 100 rounds: nothing panics or hangs,
// each call succeeds or returns an error matching os.ErrClosed (or the
// benign ErrQueueFull and ErrNoCompletion), and no fd or object leaks.
func TestIntegrationCloseRaces(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	rng := rand.New(rand.NewSource(7))
	before := leak.OpenFDs()
	const rounds = 100
	closedSeen := map[string]int{}
	for round := 0; round < rounds; round++ {
		client, server := connectPair(t, p, e, ip, nil, nil)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []string
		)
		report := func(who string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, os.ErrClosed) {
				closedSeen[who]++
				return
			}
			errs = append(errs, fmt.Sprintf("%s: %v", who, err))
		}
		stop := make(chan struct{})
		loop := func(who string, f func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					err := f()
					switch {
					case err == nil, errors.Is(err, rpma.ErrQueueFull), errors.Is(err, rpma.ErrNoCompletion):
					default:
						report(who, err)
						return
					}
					select {
					case <-stop:
						report(who, errors.New("still running after Close"))
						return
					default:
					}
				}
			}()
		}
		ctx := testCtx(t)
		loop("post", func() error { return client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1) })
		var wcs [4]cq.WC
		loop("GetWC", func() error { _, err := client.CQ().GetWC(wcs[:]); return err })
		loop("CQ.Wait", func() error { return client.CQ().Wait(ctx) })
		loop("NextEvent", func() error { _, err := client.NextEvent(ctx); return err })
		time.Sleep(time.Duration(rng.Intn(5000)) * time.Microsecond)
		require.NoError(t, client.Close())
		require.NoError(t, client.Close(), "a second Close returns nil")
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			close(stop)
			t.Fatalf("round %d: calls still running 30 s after Close", round)
		}
		require.Empty(t, errs, "round %d", round)
		require.NoError(t, server.Close())
	}
	t.Logf("errors matching os.ErrClosed, by caller: %v", closedSeen)
	require.InDelta(t, before, leak.OpenFDs(), 4, "fds before and after %d rounds", rounds)
}

// TestIntegrationIndependentEventWaits: the exclusive waits, NextEvent
// and ep.Endpoint.NextConnReq, from 8 goroutines with their own
// deadlines: each returns its context's error only once its own context
// is done, and the one event (CLOSED; a connection request) goes to
// exactly one of them.
func TestIntegrationIndependentEventWaits(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	rng := rand.New(rand.NewSource(11))
	type res struct {
		err     error
		got     bool
		ownDone bool
	}
	// run starts n waits (two of them long), makes the event happen after
	// 30 ms, and checks the results.
	run := func(what string, wait func(ctx context.Context) (bool, error), event func()) {
		const n = 8
		results := make([]res, n)
		var wg sync.WaitGroup
		var longCancel []context.CancelFunc
		for i := 0; i < n; i++ {
			d := time.Duration(5+rng.Intn(55)) * time.Millisecond
			if i < 2 {
				d = time.Minute
			}
			ctx, cancel := context.WithTimeout(context.Background(), d)
			if i < 2 {
				longCancel = append(longCancel, cancel)
			} else {
				defer cancel()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := wait(ctx)
				results[i] = res{err: err, got: got, ownDone: ctx.Err() != nil}
			}()
		}
		time.Sleep(30 * time.Millisecond)
		event()
		// Give the event time to reach a waiter, then end the long one
		// that did not get it.
		time.Sleep(time.Second)
		for _, c := range longCancel {
			c()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: waits did not return", what)
		}
		got := 0
		for i, r := range results {
			switch {
			case r.got:
				require.NoError(t, r.err)
				got++
			case errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, context.Canceled):
				require.True(t, r.ownDone, "%s waiter %d: %v while its own context was not done", what, i, r.err)
			default:
				t.Fatalf("%s waiter %d: %v", what, i, r.err)
			}
		}
		require.Equal(t, 1, got, "%s: the event went to exactly one waiter", what)
	}
	for round := 0; round < 10; round++ {
		client, server := connectPair(t, p, e, ip, nil, nil)
		run("NextEvent", func(ctx context.Context) (bool, error) {
			ev, err := client.NextEvent(ctx)
			if err == nil {
				require.Equal(t, rpma.ConnClosed, ev)
			}
			return err == nil, err
		}, func() { require.NoError(t, server.Disconnect()) })
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())

		var reqs []*conn.ConnReq
		var mu sync.Mutex
		var client2 *conn.Conn
		run("NextConnReq", func(ctx context.Context) (bool, error) {
			r, err := e.NextConnReq(ctx, nil)
			if err == nil {
				mu.Lock()
				reqs = append(reqs, r)
				mu.Unlock()
			}
			return err == nil, err
		}, func() {
			req, err := conn.NewRequest(testCtx(t), p, ip, e.Port(), nil)
			require.NoError(t, err)
			client2, err = req.Connect(nil)
			require.NoError(t, err)
		})
		for _, r := range reqs {
			require.NoError(t, r.Close()) // rejected
		}
		require.NoError(t, client2.Close())
	}
}
