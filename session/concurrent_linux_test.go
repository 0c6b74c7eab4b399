//go:build linux && cgo

package session_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

// settleCompletions gives the small operations just posted time to
// complete (milliseconds on rxe) before the call under test begins, so
// that their completions are queued, not polled, when it looks.
func settleCompletions() { time.Sleep(200 * time.Millisecond) }

// fillNonZero fills b with random bytes none of which is 0 (the targets
// start zeroed): a random 4 KiB block, repeated (a loop per byte is slow
// under -race and TCG).
func fillNonZero(b []byte) {
	var block [4096]byte
	for i := range block {
		block[i] = byte(rand.Uint32() | 1)
	}
	for off := 0; off < len(b); off += len(block) {
		copy(b[off:], block[:])
	}
}

// TestIntegrationWriteAndPersistOwnCompletion is the early
// acknowledgement of issue 34: another goroutine's WriteAndFlush,
// posted the way WriteAndPersist used to post its own (signaled, with
// PersistOpContext), has completed when a 16 MiB WriteAndPersist
// begins. WriteAndPersist must return on its own flush's completion:
// when it returns, every byte of the 16 MiB is in the target. At the old
// code it returned on the other's completion, within a millisecond, with
// the write still in flight, and the bytes' check failed.
func TestIntegrationWriteAndPersistOwnCompletion(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	const size = 16 << 20
	target, targetMem := fixture.Region(t, p, size, mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	src, srcMem := fixture.Region(t, p, size, mr.UsageWriteSrc)
	client, _, dst := pair(t, p, ip, target, peer.Cfg{DirectWriteToPMem: true}, nil)
	fillNonZero(srcMem)

	// The other goroutine's operation: completed, not yet polled.
	require.NoError(t, client.WriteAndFlush(dst, 0, src, 0, 64, rpma.FlushPersistent, rpma.CompletionAlways, session.PersistOpContext))
	settleCompletions()

	start := time.Now()
	require.NoError(t, session.WriteAndPersist(ctx, client, dst, 0, src, 0, size))
	took := time.Since(start)
	// Checked at once: an early return leaves the tail unwritten.
	if !bytes.Equal(srcMem[size-4096:], targetMem[size-4096:]) {
		t.Fatalf("WriteAndPersist returned after %v with the last 4 KiB of its 16 MiB not in the target: it returned on another operation's completion", took)
	}
	require.True(t, bytes.Equal(srcMem, targetMem), "all 16 MiB arrived")
	t.Logf("16 MiB WriteAndPersist took %v", took)

	// The other operation's completion is still there for its owner.
	wc, err := session.WaitFor(ctx, client.CQ(), session.PersistOpContext)
	require.NoError(t, err)
	require.Equal(t, session.PersistOpContext, wc.OpContext)
}

// TestIntegrationWaitForOwnOpContext is defect 2 of issue 34: two
// operations with op contexts 101 (a write) and 102 (a read) have both
// completed; WaitFor(102) returns the read's completion and leaves the
// write's to WaitFor(101), and a completion nobody waits for stays
// queued for GetWC. At the old code WaitFor(102) took 101's completion
// and failed ("a completion of op context 101 ... while waiting for
// 102"), and the completion was lost to its owner.
func TestIntegrationWaitForOwnOpContext(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	target, _ := fixture.Region(t, p, 4096, mr.UsageWriteDst|mr.UsageReadSrc)
	local, _ := fixture.Region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
	client, _, dst := pair(t, p, ip, target, peer.Cfg{}, nil)

	require.NoError(t, client.Write(dst, 0, local, 0, 8, rpma.CompletionAlways, 101))
	require.NoError(t, client.Read(local, 8, dst, 8, 8, rpma.CompletionAlways, 102))
	require.NoError(t, client.Write(dst, 16, local, 16, 8, rpma.CompletionAlways, 103))
	settleCompletions()

	wc, err := session.WaitFor(ctx, client.CQ(), 102)
	require.NoError(t, err)
	require.Equal(t, uint64(102), wc.OpContext)
	require.Equal(t, rpma.WCRDMARead, wc.Opcode)

	wc, err = session.WaitFor(ctx, client.CQ(), 101)
	require.NoError(t, err)
	require.Equal(t, uint64(101), wc.OpContext)
	require.Equal(t, rpma.WCRDMAWrite, wc.Opcode)

	// 103 nobody claimed: GetWC returns it, and only it.
	wcs := make([]cq.WC, 4)
	n, err := client.CQ().GetWC(wcs)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, uint64(103), wcs[0].OpContext)
	_, err = client.CQ().GetWC(wcs)
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "nothing delivered twice")
}

// TestIntegrationConcurrentOnOneConnection: G goroutines on one
// connection (default sizes: a send queue of 10, so most calls wait for
// room), each appending records with WriteAndPersist, and as many
// others each waiting for their own mirror-posted writes with WaitFor
// (op contexts of their own). Every call returns nil, no ErrQueueFull
// reaches a caller, and every acknowledged record is in the target when
// its call returns.
func TestIntegrationConcurrentOnOneConnection(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	const (
		G       = 16
		records = 20
		recSize = 256
		span    = records * recSize // one goroutine's part of the region
	)
	size := 2 * G * span
	target, targetMem := fixture.Region(t, p, size, mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	src, srcMem := fixture.Region(t, p, size, mr.UsageWriteSrc)
	client, _, dst := pair(t, p, ip, target, peer.Cfg{DirectWriteToPMem: true}, nil)
	fillNonZero(srcMem)

	// Mirror posts (Write) and WaitFor give ErrQueueFull when the queue is
	// full: those goroutines retry after a short pause, as a mirror user
	// would, which WriteAndPersist never needs.
	var wg sync.WaitGroup
	errs := make(chan error, 2*G)
	for g := range 2 * G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			persist := g < G
			for r := range records {
				off := g*span + r*recSize
				var err error
				if persist {
					err = session.WriteAndPersist(ctx, client, dst, off, src, off, recSize)
				} else {
					opc := uint64(g<<16 | r)
					for {
						err = client.Write(dst, off, src, off, recSize, rpma.CompletionAlways, opc)
						if !errors.Is(err, rpma.ErrQueueFull) || ctx.Err() != nil {
							break
						}
						time.Sleep(time.Millisecond)
					}
					if err == nil {
						var wc cq.WC
						wc, err = session.WaitFor(ctx, client.CQ(), opc)
						if err == nil && wc.OpContext != opc {
							err = fmt.Errorf("WaitFor(%d) returned op context %d", opc, wc.OpContext)
						}
					}
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d, record %d: %w", g, r, err)
					return
				}
				if !bytes.Equal(srcMem[off:off+recSize], targetMem[off:off+recSize]) {
					errs <- fmt.Errorf("goroutine %d, record %d: acknowledged but not in the target", g, r)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * fixture.Bound):
		t.Fatalf("the goroutines did not all return within %v", 2*fixture.Bound)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.True(t, bytes.Equal(srcMem, targetMem), "every record arrived")
}

// TestIntegrationWaitForCancelled: a WaitFor whose context ends returns
// the context's error, and the completion it waited for, when it comes,
// is still there for the next WaitFor of that op context.
func TestIntegrationWaitForCancelled(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	target, _ := fixture.Region(t, p, 4096, mr.UsageWriteDst)
	local, _ := fixture.Region(t, p, 4096, mr.UsageWriteSrc)
	client, _, dst := pair(t, p, ip, target, peer.Cfg{}, nil)

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err := session.WaitFor(short, client.CQ(), 7)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, client.Write(dst, 0, local, 0, 8, rpma.CompletionAlways, 7))
	wc, err := session.WaitFor(ctx, client.CQ(), 7)
	require.NoError(t, err)
	require.Equal(t, uint64(7), wc.OpContext)
}
