//go:build linux && cgo

package conn_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

func rcqConfig(shared bool) *conn.Config {
	cfg := conn.DefaultConfig()
	cfg.RCQSize = 8
	cfg.SharedCompChannel = shared
	return cfg
}

// TestIntegrationGetCompPingPong: 2,000 send/receive round trips with
// GetSendComp and GetRecvComp on both sides (the 8-entry receive queue
// wraps 250 times); each message carries its number, so a lost or
// duplicated completion shows. It ran 10,000 until 2026-12-06: 90 s of
// each VM tier under TCG, for no case the first 2,000 do not reach.
func TestIntegrationGetCompPingPong(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 500
	}
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	sbuf, smem := region(t, p, 4096, mr.UsageSend|mr.UsageRecv)
	cbuf, cmem := region(t, p, 4096, mr.UsageSend|mr.UsageRecv)
	client, server := pairCfg(t, p, e, ip, rcqConfig(false), rcqConfig(false), func(r *conn.ConnReq) error {
		return r.Recv(sbuf, 0, 8, 0)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	srvErr := make(chan error, 1)
	go func() {
		srvErr <- func() error {
			for i := 0; i < rounds; i++ {
				wc, err := server.GetRecvComp(ctx)
				if err != nil {
					return err
				}
				if wc.Opcode != rpma.WCRecv || wc.OpContext != uint64(i) || binary.LittleEndian.Uint64(smem) != uint64(i) {
					return errors.New("server: wrong message")
				}
				if err := server.Recv(sbuf, 0, 8, uint64(i+1)); err != nil {
					return err
				}
				binary.LittleEndian.PutUint64(smem[64:], uint64(i)^0xffff)
				if err := server.Send(sbuf, 64, 8, rpma.CompletionAlways, uint64(i)); err != nil {
					return err
				}
				if wc, err := server.GetSendComp(ctx); err != nil || wc.OpContext != uint64(i) {
					return errors.New("server: wrong send completion")
				}
			}
			return nil
		}()
	}()
	start := time.Now()
	for i := 0; i < rounds; i++ {
		require.NoError(t, client.Recv(cbuf, 64, 8, uint64(i)))
		binary.LittleEndian.PutUint64(cmem, uint64(i))
		require.NoError(t, client.Send(cbuf, 0, 8, rpma.CompletionAlways, uint64(i)))
		wc, err := client.GetSendComp(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.WCSend, wc.Opcode)
		require.Equal(t, uint64(i), wc.OpContext)
		wc, err = client.GetRecvComp(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(i), wc.OpContext)
		require.Equal(t, uint64(i)^0xffff, binary.LittleEndian.Uint64(cmem[64:]))
	}
	require.NoError(t, <-srvErr)
	t.Logf("%d round trips in %v (%v each)", rounds, time.Since(start), time.Since(start)/time.Duration(rounds))
}

// TestIntegrationGetCompCancel: a blocked GetRecvComp returns
// context.Canceled when its context is cancelled.
func TestIntegrationGetCompCancel(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, rcqConfig(false), nil, nil)
	lat := measureCancel(t, func(ctx context.Context) error {
		_, err := client.GetRecvComp(ctx)
		return err
	})
	t.Logf("GetRecvComp returned %v after the cancel", lat)
	lat = measureCancel(t, func(ctx context.Context) error {
		_, err := client.GetSendComp(ctx)
		return err
	})
	t.Logf("GetSendComp returned %v after the cancel", lat)
}

// TestIntegrationGetCompWindow: completions keep arriving while
// GetSendComp polls, waits and re-arms (another goroutine posts in a
// loop), so some arrive between a poll and a re-arm; every one is
// returned, once, in order.
func TestIntegrationGetCompWindow(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, rcqConfig(false), nil, nil)
	ctx := testCtx(t)
	const total = 3000
	posted := make(chan error, 1)
	go func() {
		for i := 0; i < total; i++ {
			for {
				err := client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(i))
				if err == nil {
					break
				}
				if !errors.Is(err, rpma.ErrQueueFull) {
					posted <- err
					return
				}
				time.Sleep(time.Duration(i%3) * 10 * time.Microsecond)
			}
		}
		posted <- nil
	}()
	for i := 0; i < total; i++ {
		wc, err := client.GetSendComp(ctx)
		require.NoError(t, err, "completion %d", i)
		require.Equal(t, uint64(i), wc.OpContext)
	}
	require.NoError(t, <-posted)
}

// TestIntegrationGetCompRules: separate CQs are needed; on a shared
// channel one goroutine may alternate the two calls, and two goroutines
// may run them concurrently.
func TestIntegrationGetCompRules(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	client, server := pairCfg(t, p, e, ip, nil, rcqConfig(true), nil)
	_, err := client.GetSendComp(ctx)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "separate CQs")
	_, err = client.GetRecvComp(ctx)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "no receive CQ")

	// Shared channel, one goroutine alternating.
	for i := 0; i < 50; i++ {
		require.NoError(t, server.Recv(nil, 0, 0, uint64(i)))
		require.NoError(t, client.Send(nil, 0, 0, rpma.CompletionOnError, 0))
		require.NoError(t, server.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(1000+i)))
		// The receive's and the write's events come in either order.
		wc, err := server.GetSendComp(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(1000+i), wc.OpContext)
		wc, err = server.GetRecvComp(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(i), wc.OpContext)
	}
	// Concurrently, on the shared channel: each waits for its own CQ,
	// and an event for either wakes both, so neither misses its
	// completion whichever reads the event.
	for i := 0; i < 50; i++ {
		recvDone := make(chan result[uint64], 1)
		go func() {
			wc, err := server.GetRecvComp(ctx)
			recvDone <- result[uint64]{v: wc.OpContext, err: err}
		}()
		sendDone := make(chan result[uint64], 1)
		go func() {
			wc, err := server.GetSendComp(ctx)
			sendDone <- result[uint64]{v: wc.OpContext, err: err}
		}()
		if i%2 == 0 {
			time.Sleep(time.Millisecond) // both blocked, sometimes
		}
		require.NoError(t, server.Recv(nil, 0, 0, uint64(2000+i)))
		require.NoError(t, client.Send(nil, 0, 0, rpma.CompletionOnError, 0))
		require.NoError(t, server.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(3000+i)))
		r := <-recvDone
		require.NoError(t, r.err, "round %d", i)
		require.Equal(t, uint64(2000+i), r.v)
		s := <-sendDone
		require.NoError(t, s.err, "round %d", i)
		require.Equal(t, uint64(3000+i), s.v)
	}
}
