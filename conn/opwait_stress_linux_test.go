//go:build linux && cgo

package conn_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationOpWaitStress: 64 goroutines on one connection call the
// waiting operations with contexts that end at random (before the post,
// or while the operation is in flight), until the connection ends under
// them: the other side disconnects, or this side closes. Every call
// returns, with nil, its ctx's error, an error matching
// rpma.ErrConnBroken or os.ErrClosed, and never rpma.ErrQueueFull; each
// goroutine's acknowledged durable write is in the target afterwards,
// and each read returns a value the goroutine wrote (at least its last
// acknowledged one); no file descriptor is left behind. Bounded: the
// operations run for a second, and everything must have returned 30 s
// after the end.
func TestIntegrationOpWaitStress(t *testing.T) {
	for _, end := range []string{"the other side disconnects", "this side closes"} {
		t.Run(end, func(t *testing.T) { opWaitStress(t, end == "this side closes") })
	}
}

func opWaitStress(t *testing.T, closeHere bool) {
	const (
		G    = 64
		slot = 64
		runs = time.Second
	)
	p, ip := newPeer(t)
	ctx := testCtx(t)
	e := listen(t, p, ip)
	target, targetMem := region(t, p, G*slot, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent)
	local, localMem := region(t, p, 2*G*slot, mr.UsageWriteSrc|mr.UsageReadDst)
	fds := openFDs(t)
	client, server := pair(t, p, e, ip, nil, nil)
	require.NoError(t, client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}))
	dst := remoteOf(t, target)

	var (
		stop     atomic.Bool
		mu       sync.Mutex
		outcomes = map[string]int{}
		problems []error
	)
	acked, attempted := make([]uint64, G), make([]uint64, G)
	classify := func(g int, what string, err error) (ok, end bool) {
		class := ""
		switch {
		case err == nil:
			class, ok = "ok", true
		case errors.Is(err, rpma.ErrQueueFull):
			class = "queue full"
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			class = "ctx"
		case errors.Is(err, os.ErrClosed):
			class, end = "closed", true
		case errors.Is(err, rpma.ErrConnBroken):
			class, end = "broken", true
		default:
			class = "unexpected"
		}
		mu.Lock()
		defer mu.Unlock()
		outcomes[what+": "+class]++
		if class == "queue full" || class == "unexpected" {
			problems = append(problems, fmt.Errorf("goroutine %d, %s: %w", g, what, err))
			end = true
		}
		return ok, end
	}
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			off, back := g*slot, G*slot+g*slot
			for seq := uint64(1); !stop.Load(); seq++ {
				opCtx, cancel := ctx, context.CancelFunc(func() {})
				switch rng.IntN(8) {
				case 0:
					opCtx, cancel = context.WithCancel(ctx)
					cancel() // ended before the post
				case 1, 2:
					opCtx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(2000))*time.Microsecond)
				}
				var ok, end bool
				if rng.IntN(3) == 0 {
					err := client.ReadWait(opCtx, local, back, dst, off, 8)
					if ok, end = classify(g, "ReadWait", err); ok {
						if v := binary.LittleEndian.Uint64(localMem[back:]); v < acked[g] || v > attempted[g] {
							mu.Lock()
							problems = append(problems, fmt.Errorf("goroutine %d read %d: acknowledged %d, attempted %d", g, v, acked[g], attempted[g]))
							mu.Unlock()
						}
					}
				} else {
					// The source only grows: a write whose ctx ended may
					// still read it later, and then carries a newer value.
					binary.LittleEndian.PutUint64(localMem[off:], seq)
					attempted[g] = seq
					err := client.WriteAndFlushWait(opCtx, dst, off, local, off, 8, rpma.FlushPersistent)
					if ok, end = classify(g, "WriteAndFlushWait", err); ok {
						acked[g] = seq
					}
				}
				cancel()
				if end {
					return
				}
			}
		})
	}
	time.Sleep(runs)
	if closeHere {
		require.NoError(t, client.Close())
	} else {
		require.NoError(t, server.Close())
	}
	stop.Store(true)
	bounded(t, waitBound, "the goroutines after the connection ended", wg.Wait)
	t.Logf("outcomes: %v", outcomes)
	for _, err := range problems {
		t.Error(err)
	}
	for g := range G {
		v := binary.LittleEndian.Uint64(targetMem[g*slot:])
		require.GreaterOrEqual(t, v, acked[g], "goroutine %d: an acknowledged durable write is not in the target", g)
		require.LessOrEqual(t, v, attempted[g], "goroutine %d: the target holds a value never written", g)
	}
	require.Positive(t, outcomes["WriteAndFlushWait: ok"], "no write was acknowledged: the test tested nothing")
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
	require.Equal(t, fds, openFDs(t), "file descriptors left behind by the connection")
}
