//go:build linux && cgo

package cq_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

func TestIntegrationGetWCBatch(t *testing.T) {
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.CQSize = 32, 32
	client, _ := connection(t, cfg)
	q := client.CQ()
	var wcs [8]cq.WC
	_, err := q.GetWC(wcs[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "an empty CQ")
	_, err = q.GetWC(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	// 20 zero-byte writes, collected in batches of up to 8.
	for i := 0; i < 20; i++ {
		require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(100+i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, batches, maxBatch := 0, 0, 0
	for got < 20 {
		n, err := q.GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			require.NoError(t, q.Wait(ctx))
			continue
		}
		require.NoError(t, err)
		batches++
		maxBatch = max(maxBatch, n)
		for _, wc := range wcs[:n] {
			require.NoError(t, wc.Err())
			require.Equal(t, rpma.WCRDMAWrite, wc.Opcode)
			require.Equal(t, uint64(100+got), wc.OpContext)
			got++
		}
	}
	t.Logf("20 completions in %d polls, at most %d at once", batches, maxBatch)
}

func TestIntegrationWaitCancelAndClose(t *testing.T) {
	client, _ := connection(t, nil)
	q := client.CQ()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Wait(ctx) }()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		require.Same(t, context.Canceled, err)
		t.Logf("Wait returned %v after the cancel", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the cancel")
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	require.ErrorIs(t, q.Wait(short), context.DeadlineExceeded)

	go func() { done <- q.Wait(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, client.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake Wait")
	}
	_, err := q.GetWC(make([]cq.WC, 1))
	require.ErrorIs(t, err, os.ErrClosed)
}

// TestIntegrationSharedChannel: one completion channel for the CQ and the
// RCQ; Conn.Wait tells which fired; the per-CQ Wait is refused.
func TestIntegrationSharedChannel(t *testing.T) {
	cfg := conn.DefaultConfig()
	cfg.RCQSize = 8
	cfg.SharedCompChannel = true
	client, server := connection(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	fd, err := client.CompFD()
	require.NoError(t, err)
	require.Equal(t, fd, client.CQ().FD())
	require.Equal(t, fd, client.RCQ().FD())
	require.ErrorIs(t, client.CQ().Wait(ctx), rpma.ErrSharedChannel)
	require.ErrorIs(t, client.RCQ().Wait(ctx), rpma.ErrSharedChannel)
	_, err = server.CompFD()
	require.ErrorIs(t, err, rpma.ErrNotSharedChannel)
	_, _, err = server.Wait(ctx)
	require.ErrorIs(t, err, rpma.ErrNotSharedChannel)

	// waitFor waits until the shared channel reports the wanted CQ. A
	// completion that a wait found by polling (the post itself may reap
	// it) leaves its channel event unread, and a later wait reads it: a
	// spurious wake-up, whose CQ has nothing to poll (seen in CI on 6.12).
	var wcs [2]cq.WC
	waitFor := func(wantRCQ bool) *cq.CQ {
		for spurious := 0; ; spurious++ {
			q, isRCQ, err := client.Wait(ctx)
			require.NoError(t, err)
			if isRCQ == wantRCQ {
				return q
			}
			require.Less(t, spurious, 2, "the shared wait keeps reporting the other CQ")
			_, perr := q.GetWC(wcs[:])
			require.ErrorIs(t, perr, rpma.ErrNoCompletion, "a wake-up for the other CQ had something to poll")
		}
	}

	// A receive completes on the RCQ.
	require.NoError(t, client.Recv(nil, 0, 0, 1))
	require.NoError(t, server.Send(nil, 0, 0, rpma.CompletionOnError, 2))
	q := waitFor(true)
	require.Same(t, client.RCQ(), q)
	n, err := q.GetWC(wcs[:])
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, rpma.WCRecv, wcs[0].Opcode)
	require.Equal(t, uint64(1), wcs[0].OpContext)

	// A write completes on the CQ.
	require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 3))
	q = waitFor(false)
	require.Same(t, client.CQ(), q)
	n, err = q.GetWC(wcs[:])
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, rpma.WCRDMAWrite, wcs[0].Opcode)
	require.Equal(t, uint64(3), wcs[0].OpContext)

	// The shared wait also ends when the other side goes. The write's
	// completion may have been reaped by the post itself, so that the
	// Wait above returned without reading the write's channel event: that
	// event is still pending, and one wait may return nil for it (a
	// spurious wake-up, with nothing to poll; seen once in CI on 6.12).
	require.NoError(t, server.Disconnect())
	for spurious := 0; ; spurious++ {
		if _, _, err = client.Wait(ctx); err != nil {
			break
		}
		require.Less(t, spurious, 2, "the shared wait keeps returning nil after the disconnect")
		for _, q := range []*cq.CQ{client.CQ(), client.RCQ()} {
			_, perr := q.GetWC(wcs[:])
			require.ErrorIs(t, perr, rpma.ErrNoCompletion, "a wake-up after the disconnect had something to poll")
		}
	}
	var ce *rpma.ConnEventError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, rpma.ConnClosed, ce.Event)
}

// TestIntegrationResize: up and down with completions pending; the size
// granted is reported, nothing is lost, a size below the pending
// completions is refused.
func TestIntegrationResize(t *testing.T) {
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.CQSize = 64, 10
	client, _ := connection(t, cfg)
	q := client.CQ()
	t.Logf("CQ of 10 asked: %d granted", q.Size())
	require.GreaterOrEqual(t, q.Size(), 10)

	require.ErrorIs(t, q.Resize(0), rpma.ErrInvalidArgument)
	require.ErrorIs(t, q.Resize(1<<30), rpma.ErrInvalidArgument)

	require.NoError(t, q.Resize(100))
	require.GreaterOrEqual(t, q.Size(), 100)
	t.Logf("resized to 100: %d granted", q.Size())
	// 40 completions pending: more than the old size.
	for i := 0; i < 40; i++ {
		require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Down, still above them: granted, nothing lost (checked below).
	require.NoError(t, q.Resize(64))
	require.GreaterOrEqual(t, q.Size(), 64)
	t.Logf("resized down to 64 with 40 pending: %d granted", q.Size())
	// Shrinking below them is refused, whether they have arrived or not.
	err := q.Resize(5)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, err, syscall.EINVAL)
	require.Contains(t, err.Error(), "40 completions outstanding")
	t.Logf("resize to 5 with 40 pending: %v", err)
	require.GreaterOrEqual(t, q.Size(), 40)

	got := 0
	var wcs [16]cq.WC
	for got < 40 {
		n, err := q.GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			require.NoError(t, q.Wait(ctx))
			continue
		}
		require.NoError(t, err)
		for _, wc := range wcs[:n] {
			require.Equal(t, uint64(got), wc.OpContext)
			got++
		}
	}
	require.NoError(t, q.Resize(5))
	t.Logf("resized to 5 when empty: %d granted", q.Size())
	require.Less(t, q.Size(), 40)
	require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 99))
	wc := waitOne(t, ctx, q)
	require.Equal(t, uint64(99), wc.OpContext)
}

func waitOne(t *testing.T, ctx context.Context, q *cq.CQ) cq.WC {
	var wcs [1]cq.WC
	for {
		n, err := q.GetWC(wcs[:])
		if n == 1 {
			return wcs[0]
		}
		require.ErrorIs(t, err, rpma.ErrNoCompletion)
		require.NoError(t, q.Wait(ctx))
	}
}
