//go:build rpma_fake && linux

package core

// Core's logic on the host, against the fake verbs layer of package ibv
// (the build tag rpma_fake): go test -race -tags rpma_fake ./internal/core/

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

const fakeIP = "127.0.0.1"

// fakeWaitMode is the wait mode of fakePair's connections whose params
// leave it at the default: TestFakeThreadWaits runs tests again with
// WaitThread.
var fakeWaitMode = WaitPoller

func fakeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakePeer returns a peer on the fake device, closed when the test ends
// (after everything the test cleans up later).
func fakePeer(t *testing.T) *Peer {
	t.Helper()
	ibv.SetFakeTiming(ibv.FakeNow)
	dev, err := DeviceForAddress(fakeIP, rpma.IbvContextLocal)
	require.NoError(t, err)
	require.Equal(t, ibv.FakeDeviceName, dev.Name())
	p, err := NewPeer(dev)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close())
		require.NoError(t, dev.Close())
	})
	return p
}

// fakePair connects two connections of p through an endpoint, with prm
// for both (nil: defaults); the client's private data pdata reaches the
// server's request.
func fakePair(t *testing.T, p *Peer, prm *ConnParams) (client, server *Conn) {
	t.Helper()
	if fakeWaitMode != WaitPoller && (prm == nil || prm.WaitMode == WaitPoller) {
		m := DefaultConnParams()
		if prm != nil {
			m = *prm
		}
		m.WaitMode = fakeWaitMode
		prm = &m
		defer func() {
			require.NotNil(t, client.q.cq.claimWaiter().thread, "the client's waits park in WaitThread mode")
			require.NotNil(t, server.q.cq.claimWaiter().thread, "the server's waits park in WaitThread mode")
		}()
	}
	ctx := fakeCtx(t)
	e, err := Listen(p, fakeIP, "0", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	type res struct {
		c   *Conn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		r, err := e.NextConnReq(ctx, prm)
		if err != nil {
			srv <- res{err: err}
			return
		}
		if !bytes.Equal(r.PrivateData(), []byte("hello")) {
			srv <- res{err: errors.New("the request's private data did not arrive")}
			r.Close()
			return
		}
		c, err := r.Connect([]byte("welcome"))
		srv <- res{c, err}
	}()
	req, err := NewConnReq(ctx, p, fakeIP, e.Port(), prm)
	require.NoError(t, err)
	client, err = req.Connect([]byte("hello"))
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	r := <-srv
	require.NoError(t, r.err)
	server = r.c
	t.Cleanup(func() { server.Close() })
	for _, c := range []*Conn{client, server} {
		ev, err := c.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev)
	}
	require.Equal(t, []byte("welcome"), client.PrivateData())
	return client, server
}

// fakeRegions registers n bytes of src on the client side and n bytes of
// dst for remote writes and reads on the server side, and returns dst as
// the client sees it.
func fakeRegions(t *testing.T, p *Peer, n int) (src, dst *MR, remote *RemoteMR) {
	t.Helper()
	var err error
	src, err = RegMR(p, make([]byte, n), UsageWriteSrc|UsageReadDst)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	dst, err = RegMR(p, make([]byte, n), UsageWriteDst|UsageReadSrc|UsageFlushVisibility)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dst.Close()) })
	d := dst.Descriptor()
	remote, err = RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	return src, dst, remote
}

// fakeWaitOne waits for and polls one completion of q.
func fakeWaitOne(t *testing.T, q *CQ) WC {
	t.Helper()
	ctx := fakeCtx(t)
	var wc [1]WC
	for {
		n, err := q.GetWC(wc[:])
		if n == 1 {
			return wc[0]
		}
		require.ErrorIs(t, err, rpma.ErrNoCompletion)
		require.NoError(t, q.Wait(ctx))
	}
}

// A write's bytes arrive in the other side's region, its completion
// carries its context; a read brings them back; a flush (emulated with a
// read) completes.
func TestFakeWriteReadFlush(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, dst, remote := fakeRegions(t, p, 4096)
	copy(src.Bytes(), "the bytes of a write")
	require.NoError(t, client.Write(remote, 100, src, 0, 20, rpma.CompletionAlways, 7))
	wc := fakeWaitOne(t, client.CQ())
	require.NoError(t, wc.Err())
	require.Equal(t, uint64(7), wc.OpContext)
	require.Equal(t, "the bytes of a write", string(dst.Bytes()[100:120]))

	clear(src.Bytes())
	ctx := fakeCtx(t)
	require.NoError(t, client.ReadWait(ctx, src, 0, remote, 100, 20))
	require.Equal(t, "the bytes of a write", string(src.Bytes()[:20]))
	require.NoError(t, client.FlushWait(ctx, remote, 0, 128, rpma.FlushVisibility))
	require.NoError(t, client.WriteAndFlushWait(ctx, remote, 200, src, 0, 8, rpma.FlushVisibility))
	require.Equal(t, "the byte", string(dst.Bytes()[200:208]))
}

// Remote atomics change the remote word and return its old value.
func TestFakeAtomics(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	res, err := RegMR(p, make([]byte, 64), UsageReadDst)
	require.NoError(t, err)
	defer res.Close()
	dst, err := RegMR(p, make([]byte, 64), UsageAtomicDst)
	require.NoError(t, err)
	defer dst.Close()
	d := dst.ExtendedDescriptor()
	remote, err := RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)
	ctx := fakeCtx(t)
	old, err := client.FetchAndAddWait(ctx, remote, 8, res, 0, 5)
	require.NoError(t, err)
	require.Zero(t, old)
	old, err = client.CompareAndSwapWait(ctx, remote, 8, res, 0, 5, 9)
	require.NoError(t, err)
	require.Equal(t, uint64(5), old)
	old, err = client.FetchAndAddWait(ctx, remote, 8, res, 0, 0)
	require.NoError(t, err)
	require.Equal(t, uint64(9), old)
}

// A send consumes a receive the other side posted, with its bytes.
func TestFakeSendRecv(t *testing.T) {
	p := fakePeer(t)
	client, server := fakePair(t, p, nil)
	src, err := RegMR(p, []byte("message!"), UsageSend)
	require.NoError(t, err)
	defer src.Close()
	dst, err := RegMR(p, make([]byte, 64), UsageRecv)
	require.NoError(t, err)
	defer dst.Close()
	require.NoError(t, server.Recv(dst, 0, 64, 11))
	ctx := fakeCtx(t)
	require.NoError(t, client.SendWait(ctx, src, 0, 8))
	wc := fakeWaitOne(t, server.CQ()) // no receive CQ of its own: one CQ
	require.NoError(t, wc.Err())
	require.Equal(t, uint64(11), wc.OpContext)
	require.Equal(t, uint32(8), wc.ByteLen)
	require.Equal(t, "message!", string(dst.Bytes()[:8]))
}

// With completions held, the send queue fills: the library refuses the
// post that would overrun it with ErrQueueFull (nothing kept, the
// connection intact); released, the queue takes posts again.
func TestFakeQueueFull(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 8, 8
	client, _ := fakePair(t, p, &prm)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	posted := 0
	var err error
	for ; posted < 100; posted++ {
		if err = client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, uint64(posted)); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	require.Positive(t, posted)
	require.LessOrEqual(t, posted, 8, "more posted than the queue holds")
	before := client.q.sq.outstanding()
	require.ErrorIs(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 99), rpma.ErrQueueFull)
	require.Equal(t, before, client.q.sq.outstanding(), "a refused post keeps nothing")
	require.NoError(t, client.Broken())

	client.q.qp.SetFakeTiming(ibv.FakeNow)
	require.Equal(t, posted, client.q.qp.FakeRelease())
	for i := 0; i < posted; i++ {
		wc := fakeWaitOne(t, client.CQ())
		require.NoError(t, wc.Err())
		require.Equal(t, uint64(i), wc.OpContext, "completions in order")
	}
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 100))
	wc := fakeWaitOne(t, client.CQ())
	require.NoError(t, wc.Err())
}

// A held completion keeps the operation's wait from returning, however
// long: no early acknowledgement (issue 34 item 1); released, it returns.
func TestFakeHeldCompletionHoldsTheWait(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, dst, remote := fakeRegions(t, p, 64)
	copy(src.Bytes(), "12345678")
	client.q.qp.SetFakeTiming(ibv.FakeLater)
	ctx := fakeCtx(t)
	pend, err := client.WriteAsync(ctx, remote, 0, src, 0, 8)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := pend.Wait(ctx)
		done <- err
	}()
	// And a waiting call too: its own write, held as well.
	done2 := make(chan error, 1)
	go func() { done2 <- client.WriteWait(ctx, remote, 8, src, 0, 8) }()
	select {
	case err := <-done:
		t.Fatalf("the wait returned (%v) before the completion came", err)
	case err := <-done2:
		t.Fatalf("WriteWait returned (%v) before the completion came", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.Equal(t, "12345678", string(dst.Bytes()[:8]), "the bytes moved at post time")
	client.q.qp.SetFakeTiming(ibv.FakeNow)
	require.Positive(t, ibv.FakeRelease())
	require.NoError(t, <-done)
	require.NoError(t, <-done2)
}

// A broken QP flushes what is outstanding: the held operation's wait
// ends with an error matching ErrConnBroken, and later posts fail so.
func TestFakeBrokenFlushes(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeNever)
	ctx := fakeCtx(t)
	pend, err := client.WriteAsync(ctx, remote, 0, src, 0, 8)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := pend.Wait(ctx)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	client.q.qp.FakeBreak() // IBV_EVENT_QP_FATAL, and the flush
	select {
	case err := <-done:
		require.ErrorIs(t, err, rpma.ErrConnBroken)
	case <-ctx.Done():
		t.Fatal("the flushed operation's wait did not end")
	}
	deadline := time.Now().Add(10 * time.Second)
	for client.Broken() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.ErrorIs(t, client.Broken(), rpma.ErrConnBroken)
	require.ErrorIs(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 1), rpma.ErrConnBroken)
}

// A remote write without the access it needs (a region registered for
// reads only) completes with the provider's error, and the connection
// breaks.
func TestFakeRemoteAccessError(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, err := RegMR(p, make([]byte, 64), UsageWriteSrc)
	require.NoError(t, err)
	defer src.Close()
	ro, err := RegMR(p, make([]byte, 64), UsageReadSrc)
	require.NoError(t, err)
	defer ro.Close()
	d := ro.Descriptor()
	remote, err := RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	// The library checks the descriptor's usage; the fake checks the
	// key's access, as rxe: forge the usage.
	remote.usage |= UsageWriteDst
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 3))
	wc := fakeWaitOne(t, client.CQ())
	require.Error(t, wc.Err())
	require.Equal(t, rpma.WCStatus(ibv.WCRemAccessErr), wc.Status)
}

// Close ends the waits of others with os.ErrClosed: an operation's, the
// CQ's, a waiting call's.
func TestFakeCloseEndsWaits(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	client.q.qp.SetFakeTiming(ibv.FakeNever)
	ctx := fakeCtx(t)
	pend, err := client.WriteAsync(ctx, remote, 0, src, 0, 8)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Add(3)
	go func() { defer wg.Done(); _, errs[0] = pend.Wait(ctx) }()
	go func() { defer wg.Done(); errs[1] = client.CQ().Wait(ctx) }()
	go func() { defer wg.Done(); errs[2] = client.WriteWait(ctx, remote, 8, src, 0, 8) }()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, client.Close())
	wg.Wait()
	for i, err := range errs {
		require.ErrorIs(t, err, os.ErrClosed, "wait %d", i)
	}
}

// A disconnect from the other side: DISCONNECTED, then posts fail.
func TestFakeDisconnect(t *testing.T) {
	p := fakePeer(t)
	client, server := fakePair(t, p, nil)
	require.NoError(t, server.Disconnect())
	ctx := fakeCtx(t)
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
	// The side that disconnected first hears of the end when the other
	// answers with its own disconnect (IB's DREP; the conformance table
	// in internal/ibv checks it against rxe).
	require.NoError(t, client.Disconnect())
	ev, err = server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
}

// A connection request to a port nobody listens on is rejected.
func TestFakeRejected(t *testing.T) {
	p := fakePeer(t)
	ctx := fakeCtx(t)
	req, err := NewConnReq(ctx, p, fakeIP, "1", nil)
	require.NoError(t, err)
	c, err := req.Connect(nil)
	require.NoError(t, err)
	defer c.Close()
	ev, err := c.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnRejected, ev)
}

// An injected failure of ibv_post_send reaches the caller as the
// provider's error, with nothing kept.
func TestFakeInjectPostSend(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	site := injectSite(t, "POST_SEND")
	ibv.InjectReset()
	ibv.InjectArm(site, 1, 22) // EINVAL
	defer ibv.InjectReset()
	before := client.q.sq.outstanding()
	err := client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 1)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.True(t, ibv.InjectFired())
	require.Equal(t, before, client.q.sq.outstanding())
	require.NoError(t, client.Write(remote, 0, src, 0, 8, rpma.CompletionAlways, 2))
	wc := fakeWaitOne(t, client.CQ())
	require.NoError(t, wc.Err())
}
