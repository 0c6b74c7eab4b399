package conn_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
)

// TestIntegrationWaitThread: a connection whose waits block a thread in
// epoll_wait (conn.WaitThread) keeps the wait contract on rxe: waits of
// 2 to 32 goroutines with their own deadlines and cancellations, on the
// CQ and on a shared channel; 1,000 writes completed through CQ.Wait;
// and 16 goroutines' waiting writes whose bytes all arrive.
func TestIntegrationWaitThread(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	const rounds = 30

	t.Run("CQ", func(t *testing.T) {
		client, _ := pairCfg(t, p, e, ip, &conn.Config{WaitMode: conn.WaitThread}, nil, nil)
		runWaitRounds(t, cqWaitTarget(t, client), rounds)
	})

	t.Run("shared channel", func(t *testing.T) {
		cfg := rcqConfig(true)
		cfg.WaitMode = conn.WaitThread
		client, server := pairCfg(t, p, e, ip, cfg, nil, nil)
		var staleEvents int
		runWaitRounds(t, sharedWaitTarget(t, client, server, &staleEvents), rounds)
	})

	t.Run("CQ.Wait loop", func(t *testing.T) {
		b := newBenchPair(t, t, 1<<12, &conn.Config{WaitMode: conn.WaitThread})
		ops := b.waitOps()
		for i := range 1000 {
			ops["Write64Wait"](t, i)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, b.client.CQ().Wait(ctx), context.DeadlineExceeded, "nothing outstanding: the deadline ends the wait")
	})

	t.Run("waiting calls", func(t *testing.T) {
		const g, each, size = 16, 20, 64
		b := newBenchPair(t, t, g*each*size, &conn.Config{WaitMode: conn.WaitThread, SQSize: 8, CQSize: 8})
		ctx := testCtx(t)
		src := b.src.Bytes()
		for i := range src {
			src[i] = byte(i*7 + 1)
		}
		var wg sync.WaitGroup
		errs := make(chan error, g)
		for w := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range each {
					off := (w*each + k) * size
					if err := b.client.WriteWait(ctx, b.rdst, off, b.src, off, size); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		require.NoError(t, errors.Join(collect(errs)...))
		require.True(t, bytes.Equal(src[:g*each*size], b.dstMem[:g*each*size]), "every acknowledged write arrived")
	})
}

// collect drains errs.
func collect(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
