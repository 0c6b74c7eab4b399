//go:build rpma_fake && linux

package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// Submission combining (combine.go), on the fake.

// postCrossings returns the site numbers of the send-queue posts that a
// waiting write or read crosses with: one request, and a chain.
func postCrossings(t *testing.T) (one, chain int) {
	t.Helper()
	one, chain = -1, -1
	for i, s := range ibv.InjectSites() {
		switch s.Name {
		case "POST_SEND":
			one = i
		case "POST_SEND_BATCH":
			chain = i
		}
	}
	require.NotEqual(t, -1, one)
	require.NotEqual(t, -1, chain)
	return one, chain
}

// injectSite returns the number of the fake's site name.
func injectSite(t *testing.T, name string) int {
	t.Helper()
	for i, s := range ibv.InjectSites() {
		if s.Name == name {
			return i
		}
	}
	t.Fatalf("no site %s", name)
	return -1
}

// combinePeer is fakePeer with combining on or off.
func combinePeer(t *testing.T, off bool) *Peer {
	p := fakePeer(t)
	p.SetTuning(Tuning{NoCombine: off})
	return p
}

// pattern fills b with bytes of goroutine g's call i.
func pattern(b []byte, g, i int) {
	for j := range b {
		b[j] = byte(g*31 + i*7 + j + 1)
	}
}

// G goroutines on one connection, each writing its own 64 bytes with
// WriteWait, reading them back with ReadWait and writing them again with
// WriteAndFlushWait (the emulated flush: two work requests a request,
// whose write is absorbed): every call returns nil,
// every byte lands, and with combining the fake counts fewer post
// crossings than operations (at most half); without it (the negative
// control) one per operation. On one P, as the counted benchmark runs:
// each call yields before its post, so the first back posts all.
func TestFakeCombineManyGoroutines(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoCombine=%v", off), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			crossings, ops := combineRun(t, off, 16, 50)
			t.Logf("%d post crossings for %d operations", crossings, ops)
			if off {
				require.Equal(t, ops, crossings)
			} else {
				require.LessOrEqual(t, 2*crossings, ops, "%d post crossings for %d operations", crossings, ops)
			}
		})
	}
	// On every P the host has: the outcome only (how much combines
	// depends on the scheduling).
	t.Run("AllPs", func(t *testing.T) {
		crossings, ops := combineRun(t, false, 16, 50)
		t.Logf("%d post crossings for %d operations", crossings, ops)
	})
}

// combineRun runs G goroutines of calls write-then-read-back pairs on one
// fake connection, checking each, and returns the post crossings the
// fake counted and the operations.
func combineRun(t *testing.T, off bool, G, calls int) (crossings, ops int64) {
	const n = 64
	p := combinePeer(t, off)
	client, _ := fakePair(t, p, nil)
	src, dst, remote := fakeRegions(t, p, 2*G*n)
	ctx := fakeCtx(t)
	one, chain := postCrossings(t)
	writeRead := injectSite(t, "POST_SEND_WRITE_READ")
	ibv.InjectReset()
	defer ibv.InjectReset()
	var (
		wg   sync.WaitGroup
		errs = make([]error, G)
	)
	start := make(chan struct{})
	for g := range G {
		wg.Go(func() {
			<-start
			out := src.buf[g*n : (g+1)*n]
			back := src.buf[(G+g)*n : (G+g+1)*n]
			for i := range calls {
				pattern(out, g, i)
				if err := client.WriteWait(ctx, remote, g*n, src, g*n, n); err != nil {
					errs[g] = fmt.Errorf("goroutine %d, write %d: %w", g, i, err)
					return
				}
				if !bytes.Equal(dst.buf[g*n:(g+1)*n], out) {
					errs[g] = fmt.Errorf("goroutine %d, write %d: the bytes did not land", g, i)
					return
				}
				clear(back)
				if err := client.ReadWait(ctx, src, (G+g)*n, remote, g*n, n); err != nil {
					errs[g] = fmt.Errorf("goroutine %d, read %d: %w", g, i, err)
					return
				}
				if !bytes.Equal(back, out) {
					errs[g] = fmt.Errorf("goroutine %d, read %d: read back other bytes", g, i)
					return
				}
				pattern(out, g, calls+i)
				if err := client.WriteAndFlushWait(ctx, remote, g*n, src, g*n, n, rpma.FlushVisibility); err != nil {
					errs[g] = fmt.Errorf("goroutine %d, write and flush %d: %w", g, i, err)
					return
				}
				if !bytes.Equal(dst.buf[g*n:(g+1)*n], out) {
					errs[g] = fmt.Errorf("goroutine %d, write and flush %d: the bytes did not land", g, i)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	c := ibv.InjectCounts()
	requireQueueIdle(t, client)
	return c[one] + c[chain] + c[writeRead], int64(3 * G * calls)
}

// requireQueueIdle checks that nothing is outstanding on c's send queue
// and that its CQ holds no entries.
func requireQueueIdle(t *testing.T, c *Conn) {
	t.Helper()
	c.dl.mu.Lock()
	defer c.dl.mu.Unlock()
	require.Zero(t, c.q.sq.outstanding(), "requests outstanding")
	require.Zero(t, c.cq.budget.used, "CQ entries held")
	require.Nil(t, c.dl.comb.Load(), "requests left on the combining list")
}

// A combined request refused for room waits for room and completes later:
// with a send queue of 8 and completions held until released, the first
// chain posts what fits and the rest of its requests wait for room, each
// completing once a release makes room. Without combining (the negative
// control) no chain is posted.
func TestFakeCombineRefusedForRoom(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoCombine=%v", off), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			const (
				G = 16
				n = 8
			)
			p := combinePeer(t, off)
			client, _ := fakePair(t, p, &ConnParams{SQSize: 8})
			src, dst, remote := fakeRegions(t, p, G*n)
			ctx := fakeCtx(t)
			_, chain := postCrossings(t)
			ibv.InjectReset()
			defer ibv.InjectReset()
			client.q.qp.SetFakeTiming(ibv.FakeLater)
			var (
				wg   sync.WaitGroup
				errs [G]error
				done atomic.Int32
			)
			start := make(chan struct{})
			for g := range G {
				wg.Go(func() {
					<-start
					pattern(src.buf[g*n:(g+1)*n], g, 0)
					errs[g] = writeOrFlush(ctx, client, g, remote, src, n)
					done.Add(1)
				})
			}
			close(start)
			// Release the held completions until every call returned.
			for done.Load() < G {
				time.Sleep(time.Millisecond)
				ibv.FakeRelease()
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs[:]...))
			require.Equal(t, src.buf[:G*n], dst.buf[:G*n], "every byte lands")
			st := client.Stats()
			chains := ibv.InjectCounts()[chain]
			t.Logf("queue full %d times, %d chains", st.QueueFull, chains)
			require.NotZero(t, st.QueueFull, "no request was refused for room")
			requireQueueIdle(t, client)
			if !off {
				require.NotZero(t, chains, "no chain was posted")
			} else {
				require.Zero(t, chains)
			}
		})
	}
}

// An injected failure of a chain fails exactly the calls whose requests
// were in it, with the provider's error, and rolls back their slots: the
// others' bytes land, theirs do not, and afterwards nothing is left
// outstanding. The chain's failure is injected into the third chain; the
// negative control (no combining) posts no chain, so nothing fails.
func TestFakeCombineInjectedChainFailure(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoCombine=%v", off), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			const (
				G     = 8
				n     = 8
				calls = 20
			)
			p := combinePeer(t, off)
			client, _ := fakePair(t, p, nil)
			src, dst, remote := fakeRegions(t, p, G*n)
			ctx := fakeCtx(t)
			_, chain := postCrossings(t)
			ibv.InjectReset()
			defer ibv.InjectReset()
			ibv.InjectArm(chain, 3, 5) // EIO
			var (
				wg     sync.WaitGroup
				errs   [G]error
				failed atomic.Int32
			)
			start := make(chan struct{})
			for g := range G {
				wg.Go(func() {
					<-start
					out := src.buf[g*n : (g+1)*n]
					landed := dst.buf[g*n : (g+1)*n]
					for i := range calls {
						pattern(out, g, i)
						err := writeOrFlushAt(ctx, client, g, g+i, remote, src, n)
						switch {
						case err == nil && !bytes.Equal(landed, out):
							errs[g] = fmt.Errorf("goroutine %d, write %d: the bytes did not land", g, i)
						case err == nil:
							continue
						case !errors.Is(err, rpma.ErrProvider):
							errs[g] = fmt.Errorf("goroutine %d, write %d: %w", g, i, err)
						case bytes.Equal(landed, out):
							errs[g] = fmt.Errorf("goroutine %d, write %d failed, but its bytes landed", g, i)
						default:
							failed.Add(1)
							continue
						}
						return
					}
				})
			}
			close(start)
			wg.Wait()
			require.NoError(t, errors.Join(errs[:]...))
			requireQueueIdle(t, client)
			t.Logf("%d calls failed", failed.Load())
			if !off {
				require.True(t, ibv.InjectFired())
				require.Greater(t, failed.Load(), int32(1), "the chain failed fewer than two calls")
				require.Less(t, failed.Load(), int32(G*calls))
			} else {
				require.False(t, ibv.InjectFired())
				require.Zero(t, failed.Load())
			}
		})
	}
}

// The rollback of a failed chain, with nothing posted after it: one call
// posts alone (the only one in progress) and waits, its completion held;
// the others, on one P, go on the combining list and are posted as one
// chain, whose injected failure fails them all. Then the queue and the
// CQ hold the first call's request alone (without the rollback, the
// failed ones' slots too), and after the release nothing at all.
func TestFakeCombineChainFailureRollsBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const (
		G = 8
		n = 8
	)
	p := combinePeer(t, false)
	client, _ := fakePair(t, p, nil)
	src, dst, remote := fakeRegions(t, p, G*n)
	ctx := fakeCtx(t)
	_, chain := postCrossings(t)
	ibv.InjectReset()
	defer ibv.InjectReset()
	ibv.InjectArm(chain, 1, 5) // EIO
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	var (
		wg       sync.WaitGroup
		errs     [G]error
		returned atomic.Int32
		ret      [G]atomic.Bool
	)
	start := make(chan struct{})
	for g := range G {
		wg.Go(func() {
			<-start
			pattern(src.buf[g*n:(g+1)*n], g, 0)
			errs[g] = writeOrFlush(ctx, client, g, remote, src, n)
			ret[g].Store(true)
			returned.Add(1)
		})
	}
	close(start)
	// Wait until the work requests outstanding are those of the calls
	// that have not returned (a write-and-flush, odd g, has two).
	outstanding := func() (int, int64) {
		client.dl.mu.Lock()
		defer client.dl.mu.Unlock()
		return client.q.sq.outstanding(), client.cq.budget.used
	}
	waiting := func() (calls, wrs int) {
		for g := range G {
			if !ret[g].Load() {
				calls++
				wrs += 1 + g%2
			}
		}
		return calls, wrs
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		o, _ := outstanding()
		_, w := waiting()
		if returned.Load() > 0 && o == w {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d calls returned, %d work requests outstanding, those of the others: %d", returned.Load(), o, w)
		time.Sleep(time.Millisecond)
	}
	o, used := outstanding()
	calls, _ := waiting()
	require.True(t, ibv.InjectFired())
	require.GreaterOrEqual(t, int(returned.Load()), 2, "the failed chain held fewer than two calls")
	require.Equal(t, int64(o), used, "CQ entries held")
	for g := range G {
		if errs[g] != nil {
			require.ErrorIs(t, errs[g], rpma.ErrProvider)
			require.NotEqual(t, src.buf[g*n:(g+1)*n], dst.buf[g*n:(g+1)*n], "a failed call's bytes landed")
		}
	}
	for returned.Load() < G {
		ibv.FakeRelease()
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	failed := 0
	for g := range G {
		if errs[g] == nil {
			require.Equal(t, src.buf[g*n:(g+1)*n], dst.buf[g*n:(g+1)*n], "a call's bytes did not land")
		} else {
			failed++
		}
	}
	t.Logf("%d of %d calls failed with the chain", failed, G)
	require.Equal(t, G-calls, failed)
	requireQueueIdle(t, client)
}

// writeOrFlush writes goroutine g's n bytes with WriteWait when g is
// even, with WriteAndFlushWait when it is odd.
func writeOrFlush(ctx context.Context, c *Conn, g int, remote *RemoteMR, src *MR, n int) error {
	return writeOrFlushAt(ctx, c, g, g, remote, src, n)
}

// writeOrFlushAt writes goroutine g's n bytes, with WriteAndFlushWait
// when k is odd.
func writeOrFlushAt(ctx context.Context, c *Conn, g, k int, remote *RemoteMR, src *MR, n int) error {
	if k%2 == 1 {
		return c.WriteAndFlushWait(ctx, remote, g*n, src, g*n, n, rpma.FlushVisibility)
	}
	return c.WriteWait(ctx, remote, g*n, src, g*n, n)
}
