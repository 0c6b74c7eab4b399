//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationQueueFull: posting past the send queue, the receive
// queue or the CQ is a typed queue-full error, not a provider error.
// Sends to a side without receives stay outstanding (receiver not ready,
// retried forever with RNRRetryCount 7), which keeps the queues full
// until the other side posts receives.
func TestIntegrationQueueFull(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.RQSize, cfg.CQSize, cfg.RCQSize = 4, 2, 32, 8
	client, server := pairCfg(t, p, e, ip, cfg, nil, nil)
	ctx := testCtx(t)
	buf, _ := region(t, p, 4096, mr.UsageSend|mr.UsageRecv)

	for i := 0; i < 4; i++ {
		require.NoError(t, client.Send(buf, 0, 64, rpma.CompletionAlways, uint64(i)))
	}
	err := client.Send(buf, 0, 64, rpma.CompletionAlways, 99)
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	require.ErrorIs(t, err, rpma.ErrProvider, "librpma would say RPMA_E_PROVIDER")
	require.NotErrorIs(t, err, rpma.ErrConnBroken)
	t.Logf("send queue: %v", err)
	for i := 0; i < 4; i++ {
		require.NoError(t, server.Recv(buf, 64*i, 64, uint64(10+i)))
	}
	for i := 0; i < 4; i++ {
		okWC(t, ctx, client.CQ(), rpma.WCSend, uint64(i))
	}
	for i := 0; i < 4; i++ {
		okWC(t, ctx, server.CQ(), rpma.WCRecv, uint64(10+i))
	}
	require.NoError(t, server.Recv(buf, 0, 64, 20))
	require.NoError(t, client.Send(buf, 0, 64, rpma.CompletionAlways, 5), "polling freed the queue")
	okWC(t, ctx, client.CQ(), rpma.WCSend, 5)
	okWC(t, ctx, server.CQ(), rpma.WCRecv, 20)

	require.NoError(t, client.Recv(buf, 0, 64, 1))
	require.NoError(t, client.Recv(buf, 64, 64, 2))
	err = client.Recv(buf, 128, 64, 3)
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	t.Logf("receive queue: %v", err)

	// A CQ smaller than the send queue: the CQ fills first.
	cfg2 := conn.DefaultConfig()
	cfg2.SQSize, cfg2.CQSize = 64, 4
	c2, s2 := pairCfg(t, p, e, ip, cfg2, nil, nil)
	n := c2.CQ().Size()
	require.Less(t, n, 64)
	for i := 0; i < n; i++ {
		require.NoError(t, c2.Send(buf, 0, 8, rpma.CompletionAlways, uint64(i)))
	}
	err = c2.Send(buf, 0, 8, rpma.CompletionAlways, 99)
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	require.Contains(t, err.Error(), "completion queue")
	t.Logf("CQ of %d entries: %v", n, err)
	for i := 0; i < n; i++ {
		require.NoError(t, s2.Recv(buf, 0, 64, uint64(i)))
		okWC(t, ctx, s2.CQ(), rpma.WCRecv, uint64(i))
	}
	for i := 0; i < n; i++ {
		okWC(t, ctx, c2.CQ(), rpma.WCSend, uint64(i))
	}
}

// TestIntegrationSQKeptFull posts 1000 writes (every third one signaled)
// keeping the send queue full: on each queue-full error it polls; every
// signaled write's completion arrives exactly once, in order, and the
// data of the last write is in place.
func TestIntegrationSQKeptFull(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.CQSize = 8, 16
	client, _ := pairCfg(t, p, e, ip, cfg, nil, nil)
	ctx := testCtx(t)
	dst, dstMem := region(t, p, 8*1000, mr.UsageWriteDst|mr.UsageFlushVisibility)
	src, srcMem := region(t, p, 8*1000, mr.UsageWriteSrc)
	rdst := remoteOf(t, dst)
	for i := range srcMem {
		srcMem[i] = byte(i * 7)
	}

	const total = 1000
	var (
		next    uint64 // next signaled context expected
		got     int
		full    int
		wcs     [16]cq.WC
		signals int
	)
	drain := func(block bool) {
		for {
			n, err := client.CQ().GetWC(wcs[:])
			if errors.Is(err, rpma.ErrNoCompletion) {
				if !block {
					return
				}
				require.NoError(t, client.CQ().Wait(ctx))
				continue
			}
			require.NoError(t, err)
			for _, wc := range wcs[:n] {
				require.NoError(t, wc.Err())
				require.Equal(t, next, wc.OpContext, "in order, none lost, none twice")
				next += 3
				got++
			}
			return
		}
	}
	for i := 0; i < total; i++ {
		flags := rpma.CompletionOnError
		if i%3 == 0 {
			flags = rpma.CompletionAlways
			signals++
		}
		for {
			err := client.Write(rdst, i*8, src, i*8, 8, flags, uint64(i))
			if err == nil {
				break
			}
			require.ErrorIs(t, err, rpma.ErrQueueFull)
			full++
			drain(true)
		}
	}
	for got < signals {
		drain(true)
	}
	require.Equal(t, signals, got)
	require.NoError(t, client.Flush(rdst, 0, 8*total, rpma.FlushVisibility, rpma.CompletionAlways, 1<<40))
	for {
		wc := nextWC(t, ctx, client.CQ())
		if wc.OpContext == 1<<40 {
			break
		}
	}
	require.Equal(t, srcMem[:8*total], dstMem[:8*total])
	t.Logf("%d writes, %d signaled completions, queue full %d times", total, got, full)
}

// TestIntegrationUnsignaledRun: a long run of unsignaled writes does not
// fill the send queue for good: the library signals every SQSize/2-th one
// and absorbs its completion, so polling frees the queue and the caller
// sees only the completion it asked for.
func TestIntegrationUnsignaledRun(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil) // SQSize 10
	ctx := testCtx(t)
	dst, dstMem := region(t, p, 4096, mr.UsageWriteDst|mr.UsageFlushVisibility)
	src, srcMem := region(t, p, 4096, mr.UsageWriteSrc)
	rdst := remoteOf(t, dst)
	var wcs [4]cq.WC
	full := 0
	// post retries a post that finds the queue full, after polling (and
	// waiting) for the internal signaled completion that frees it; the
	// caller must never see that completion.
	post := func(do func() error) {
		for {
			err := do()
			if err == nil {
				return
			}
			require.ErrorIs(t, err, rpma.ErrQueueFull)
			full++
			n, err := client.CQ().GetWC(wcs[:])
			if errors.Is(err, rpma.ErrNoCompletion) {
				require.NoError(t, client.CQ().Wait(ctx))
				continue
			}
			require.NoError(t, err)
			require.Zero(t, n, "no completion the caller did not ask for")
		}
	}
	for i := 0; i < 500; i++ {
		srcMem[i%4096] = byte(i)
		post(func() error {
			return client.Write(rdst, i%4096, src, i%4096, 1, rpma.CompletionOnError, uint64(i))
		})
	}
	// The queue may still be full of the run's last writes: the flush
	// waits for room like any post.
	post(func() error { return client.Flush(rdst, 0, 500, rpma.FlushVisibility, rpma.CompletionAlways, 7) })
	okWC(t, ctx, client.CQ(), flushOp(client), 7)
	_, err := client.CQ().GetWC(wcs[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion)
	require.Equal(t, srcMem[:500], dstMem[:500])
	t.Logf("queue full %d times in 500 unsignaled writes", full)
}

// TestIntegrationConcurrentPosts: several goroutines post on one
// connection while another polls its CQ; every completion arrives once.
func TestIntegrationConcurrentPosts(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.CQSize = 16, 32
	client, _ := pairCfg(t, p, e, ip, cfg, nil, nil)
	ctx := testCtx(t)
	dst, _ := region(t, p, 4096, mr.UsageWriteDst|mr.UsageReadSrc)
	src, _ := region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
	rdst := remoteOf(t, dst)

	const writers, each = 4, 100
	seen := make(map[uint64]bool)
	done := make(chan struct{})
	pollErr := make(chan error, 1)
	go func() {
		var wcs [8]cq.WC
		for len(seen) < writers*each {
			n, err := client.CQ().GetWC(wcs[:])
			if errors.Is(err, rpma.ErrNoCompletion) {
				wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				err = client.CQ().Wait(wctx)
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					pollErr <- err
					return
				}
				continue
			}
			if err != nil {
				pollErr <- err
				return
			}
			for _, wc := range wcs[:n] {
				if seen[wc.OpContext] || wc.Err() != nil {
					pollErr <- errors.New("duplicate or failed completion")
					return
				}
				seen[wc.OpContext] = true
			}
		}
		close(done)
	}()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := uint64(w*each + i)
				for {
					var err error
					if i%2 == 0 {
						err = client.Write(rdst, w*64, src, w*64, 64, rpma.CompletionAlways, id)
					} else {
						err = client.Read(src, 2048+w*64, rdst, w*64, 64, rpma.CompletionAlways, id)
					}
					if err == nil {
						break
					}
					if !errors.Is(err, rpma.ErrQueueFull) {
						t.Error(err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-done:
	case err := <-pollErr:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatalf("only %d of %d completions", len(seen), writers*each)
	}
	require.Len(t, seen, writers*each)
}
