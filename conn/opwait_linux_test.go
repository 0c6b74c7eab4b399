//go:build linux && cgo

package conn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// bounded runs f in a goroutine and fails the test when it has not
// returned within d: a hang is a failure.
func bounded(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// TestIntegrationOpWaitEveryKind: each per-operation call does what its
// mirror call does and returns once it has: the bytes written are in the
// target, the bytes read in the destination, the old values of the
// remote atomics returned, a message received with its length and
// immediate data. None of their completions reaches GetWC.
func TestIntegrationOpWaitEveryKind(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)
	e := listen(t, p, ip)
	client, server := pair(t, p, e, ip, nil, nil)
	require.NoError(t, client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}))

	target, targetMem := region(t, p, 4096, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent|mr.UsageFlushVisibility|mr.UsageAtomicDst)
	local, localMem := region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend|mr.UsageRecv)
	d := target.ExtendedDescriptor()
	dst, err := mr.RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)

	copy(localMem, "per-operation write")
	require.NoError(t, client.WriteWait(ctx, dst, 0, local, 0, 19))
	require.Equal(t, "per-operation write", string(targetMem[:19]))

	require.NoError(t, client.FlushWait(ctx, dst, 0, 19, rpma.FlushPersistent))
	require.NoError(t, client.FlushWait(ctx, dst, 0, 19, rpma.FlushVisibility))

	copy(localMem[64:], "written and flushed")
	require.NoError(t, client.WriteAndFlushWait(ctx, dst, 64, local, 64, 19, rpma.FlushPersistent))
	require.Equal(t, "written and flushed", string(targetMem[64:83]))

	copy(targetMem[128:], "read me back")
	require.NoError(t, client.ReadWait(ctx, local, 256, dst, 128, 12))
	require.Equal(t, "read me back", string(localMem[256:268]))

	require.NoError(t, client.AtomicWriteWait(ctx, dst, 512, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, targetMem[512:520])

	binary.NativeEndian.PutUint64(targetMem[1024:], 40)
	old, err := client.FetchAndAddWait(ctx, dst, 1024, local, 1024, 2)
	require.NoError(t, err)
	require.Equal(t, uint64(40), old)
	require.Equal(t, uint64(42), binary.NativeEndian.Uint64(targetMem[1024:]))
	old, err = client.CompareAndSwapWait(ctx, dst, 1024, local, 1024, 42, 7)
	require.NoError(t, err)
	require.Equal(t, uint64(42), old, "swapped")
	old, err = client.CompareAndSwapWait(ctx, dst, 1024, local, 1024, 42, 9)
	require.NoError(t, err)
	require.Equal(t, uint64(7), old, "not swapped: 7 is not 42")
	require.Equal(t, uint64(7), binary.NativeEndian.Uint64(targetMem[1024:]))

	// Messages: the server receives with RecvWait while the client sends
	// with SendWait and SendWithImmWait.
	srvBuf, srvMem := region(t, p, 4096, mr.UsageRecv|mr.UsageSend)
	got := make(chan cq.WC, 2)
	recvErr := make(chan error, 1)
	go func() {
		for i := range 2 {
			wc, err := server.RecvWait(ctx, srvBuf, i*64, 64)
			if err != nil {
				recvErr <- err
				return
			}
			got <- wc
		}
		recvErr <- nil
	}()
	copy(localMem[2048:], "ping")
	require.NoError(t, client.SendWait(ctx, local, 2048, 4))
	require.NoError(t, client.SendWithImmWait(ctx, local, 2048, 4, 0xfeed))
	bounded(t, 2*time.Minute, "RecvWait", func() { require.NoError(t, <-recvErr) })
	wc := <-got
	require.Equal(t, uint32(4), wc.ByteLen)
	require.Equal(t, "ping", string(srvMem[:4]))
	wc = <-got
	require.NotZero(t, wc.Flags&cq.WithImm)
	require.Equal(t, uint32(0xfeed), wc.Imm)

	// A write with immediate data: the server's receive gets the
	// immediate, the bytes land in the target.
	go func() {
		wc, err := server.RecvWait(ctx, srvBuf, 0, 64)
		if err == nil {
			got <- wc
		}
		recvErr <- err
	}()
	copy(localMem[3000:], "imm")
	require.NoError(t, client.WriteWithImmWait(ctx, dst, 3000, local, 3000, 3, 77))
	bounded(t, 2*time.Minute, "RecvWait", func() { require.NoError(t, <-recvErr) })
	wc = <-got
	require.Equal(t, uint32(77), wc.Imm)
	require.Equal(t, "imm", string(targetMem[3000:3003]))

	// Nothing of theirs is left for the mirror's poll.
	wcs := make([]cq.WC, 8)
	_, err = client.CQ().GetWC(wcs)
	require.ErrorIs(t, err, rpma.ErrNoCompletion)
	_, err = server.CQ().GetWC(wcs)
	require.ErrorIs(t, err, rpma.ErrNoCompletion)
}

// TestIntegrationOpWaitRefusesBeforePosting: bad arguments and a done
// context are refused before anything is posted: the target is
// untouched and no completion comes.
func TestIntegrationOpWaitRefusesBeforePosting(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)
	e := listen(t, p, ip)
	client, _ := pair(t, p, e, ip, nil, nil)
	target, targetMem := region(t, p, 4096, mr.UsageWriteDst)
	local, localMem := region(t, p, 4096, mr.UsageWriteSrc)
	dst := remoteOf(t, target)
	copy(localMem, "never")

	err := client.WriteWait(ctx, dst, 4090, local, 0, 8)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "beyond the remote region")
	err = client.WriteAndFlushWait(ctx, dst, 0, local, 0, 5, rpma.FlushPersistent)
	require.ErrorIs(t, err, rpma.ErrNotSupported, "no direct write to pmem declared")
	done, cancel := context.WithCancel(ctx)
	cancel()
	err = client.WriteWait(done, dst, 0, local, 0, 5)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, rpma.ErrOutcomeUnknown, "nothing was posted")
	//lint:ignore SA1012 a nil context must be refused, not crash
	err = client.WriteWait(nil, dst, 0, local, 0, 5)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	time.Sleep(100 * time.Millisecond)
	require.Equal(t, make([]byte, 8), targetMem[:8], "nothing was written")
	wcs := make([]cq.WC, 4)
	_, err = client.CQ().GetWC(wcs)
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "nothing was posted")
}

// TestIntegrationOpWaitManyGoroutines: 64 goroutines on one connection
// with the default sizes (a send queue of 10), each writing, reading back
// and write-and-persisting its own records, while another goroutine
// posts with the mirror and polls with GetWC: every call returns nil
// (none sees ErrQueueFull: they wait for room), every acknowledged
// record is in the target when its call returns, each mirror completion
// is polled exactly once and no per-operation completion reaches GetWC.
func TestIntegrationOpWaitManyGoroutines(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)
	e := listen(t, p, ip)
	client, _ := pair(t, p, e, ip, nil, nil)
	require.NoError(t, client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}))
	const (
		G       = 64
		records = 8
		recSize = 64
		span    = records * recSize
	)
	target, targetMem := region(t, p, 2*G*span, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent)
	local, localMem := region(t, p, 2*G*span, mr.UsageWriteSrc|mr.UsageReadDst)
	dst := remoteOf(t, target)
	for i := range localMem[:G*span] {
		localMem[i] = byte(i%251 + 1)
	}

	var wg sync.WaitGroup
	errs := make(chan error, G+1)
	for g := range G {
		wg.Go(func() {
			for r := range records {
				off := g*span + r*recSize
				back := G*span + off
				var err error
				switch r % 3 {
				case 0:
					err = client.WriteWait(ctx, dst, off, local, off, recSize)
				case 1:
					err = client.WriteAndFlushWait(ctx, dst, off, local, off, recSize, rpma.FlushPersistent)
				case 2:
					if err = client.WriteWait(ctx, dst, off, local, off, recSize); err == nil {
						err = client.ReadWait(ctx, local, back, dst, off, recSize)
						if err == nil && !bytes.Equal(localMem[back:back+recSize], localMem[off:off+recSize]) {
							err = errors.New("read back other bytes")
						}
					}
				}
				if err == nil && !bytes.Equal(targetMem[off:off+recSize], localMem[off:off+recSize]) {
					err = errors.New("acknowledged but not in the target")
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d, record %d: %w", g, r, err)
					return
				}
			}
		})
	}
	// The mirror, on the same connection: signaled writes of the last
	// record's bytes (rewritten with themselves), polled by GetWC.
	const mirrorOps = 50
	wg.Go(func() {
		seen := make(map[uint64]int)
		wcs := make([]cq.WC, 4)
		posted := 0
		for len(seen) < mirrorOps && ctx.Err() == nil {
			if posted < mirrorOps {
				err := client.Write(dst, 0, local, 0, recSize, rpma.CompletionAlways, uint64(1000+posted))
				switch {
				case err == nil:
					posted++
				case !errors.Is(err, rpma.ErrQueueFull):
					errs <- fmt.Errorf("mirror post: %w", err)
					return
				}
			}
			n, err := client.CQ().GetWC(wcs)
			if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
				errs <- fmt.Errorf("mirror poll: %w", err)
				return
			}
			for _, wc := range wcs[:n] {
				if wc.OpContext < 1000 || wc.OpContext >= 1000+mirrorOps {
					errs <- fmt.Errorf("GetWC returned a completion that is not the mirror's: %+v", wc)
					return
				}
				seen[wc.OpContext]++
				if seen[wc.OpContext] > 1 {
					errs <- fmt.Errorf("op context %d polled twice", wc.OpContext)
					return
				}
			}
			if n == 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
	})
	bounded(t, 3*time.Minute, "the goroutines", wg.Wait)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestIntegrationOpWaitCloseAndBreak: Close ends every pending call at
// once with os.ErrClosed; a failed operation (a read the other side's
// registration refuses) ends its own call and every call pending behind
// it with one error shape matching rpma.ErrConnBroken, whose cause is the
// first failure; later calls fail the same way at once; a context that
// ends after the post says the outcome is unknown.
func TestIntegrationOpWaitCloseAndBreak(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)

	t.Run("ctx", func(t *testing.T) {
		e := listen(t, p, ip)
		client, server := pair(t, p, e, ip, nil, nil)
		local, _ := region(t, p, 4096, mr.UsageSend)
		_ = server
		// A send with no receive posted on the other side waits (RNR
		// retries for ever with the default count): its context ends
		// after the post.
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err := client.SendWait(short, local, 0, 8)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Contains(t, err.Error(), "outcome is unknown")
		require.ErrorIs(t, err, rpma.ErrOutcomeUnknown)
	})

	t.Run("close", func(t *testing.T) {
		e := listen(t, p, ip)
		client, _ := pair(t, p, e, ip, nil, nil)
		local, _ := region(t, p, 4096, mr.UsageSend)
		const G = 8
		errs := make(chan error, G)
		for range G {
			go func() { errs <- client.SendWait(ctx, local, 0, 8) }() // never received
		}
		time.Sleep(200 * time.Millisecond)
		require.NoError(t, client.Close())
		bounded(t, fixtureBound, "the pending calls after Close", func() {
			for range G {
				require.ErrorIs(t, <-errs, os.ErrClosed)
			}
		})
		require.ErrorIs(t, client.SendWait(ctx, local, 0, 8), os.ErrClosed)
	})

	t.Run("break", func(t *testing.T) {
		e := listen(t, p, ip)
		client, _ := pair(t, p, e, ip, nil, nil)
		target, _ := region(t, p, 4096, mr.UsageWriteDst)
		local, _ := region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
		dst, forged := remoteOf(t, target), forgedRemoteOf(t, target, mr.UsageReadSrc)
		// G goroutines write until their call fails: pending when the
		// read fails, or posted after it.
		const G = 8
		errs := make(chan error, G)
		for range G {
			go func() {
				for range 100000 {
					if err := client.WriteWait(ctx, dst, 0, local, 0, 8); err != nil {
						errs <- err
						return
					}
				}
				errs <- errors.New("never failed")
			}()
		}
		time.Sleep(50 * time.Millisecond)
		err := client.ReadWait(ctx, local, 0, forged, 0, 8)
		require.ErrorIs(t, err, rpma.ErrConnBroken)
		var wce *rpma.WCError
		require.ErrorAs(t, err, &wce)
		require.Equal(t, rpma.WCRemAccessErr, wce.Status, "the cause is the first failure")
		bounded(t, fixtureBound, "the writers after the failure", func() {
			for range G {
				err := <-errs
				require.ErrorIs(t, err, rpma.ErrConnBroken)
				require.ErrorAs(t, err, &wce)
				require.Equal(t, rpma.WCRemAccessErr, wce.Status, "one shape: the first failure is the cause: %v", err)
			}
		})
		err = client.WriteWait(ctx, dst, 0, local, 0, 8)
		require.ErrorIs(t, err, rpma.ErrConnBroken, "later calls fail at once")
	})
}

// fixtureBound bounds one wait of these tests.
const fixtureBound = 20 * time.Second

var _ = conn.DefaultConfig
