//go:build linux && cgo

package session_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

type accepted struct {
	c   *conn.Conn
	err error
}

// acceptAsync runs session.Accept in a goroutine.
func acceptAsync(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, m *mr.Local, pcfg peer.Cfg) <-chan accepted {
	ch := make(chan accepted, 1)
	go func() {
		c, err := session.Accept(ctx, e, cfg, m, pcfg)
		ch <- accepted{c, err}
	}()
	return ch
}

// pair connects a client to a server that offers m with pcfg; both are
// closed when the test ends.
func pair(t *testing.T, p *peer.Peer, ip string, m *mr.Local, pcfg peer.Cfg, cfg *conn.Config) (client, server *conn.Conn, dst *mr.Remote) {
	t.Helper()
	ctx := fixture.Ctx(t)
	e := fixture.Listen(t, p, ip)
	srv := acceptAsync(ctx, e, cfg, m, pcfg)
	client, dst, err := session.Connect(ctx, p, ip, e.Port(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close()) })
	a := <-srv
	require.NoError(t, a.err)
	t.Cleanup(func() { require.NoError(t, a.c.Close()) })
	return client, a.c, dst
}

// TestIntegrationWriteAndPersist is the whole path: a server offers
// persistent-flushable memory with direct write to pmem, the client gets
// exactly that region, writes and persists random bytes, which are in the
// server's memory when WriteAndPersist returns, and both sides hang up
// within the bound.
func TestIntegrationWriteAndPersist(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	target, targetMem := fixture.Region(t, p, 1<<16, mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	src, srcMem := fixture.Region(t, p, 1<<16, mr.UsageWriteSrc)
	client, server, dst := pair(t, p, ip, target, peer.Cfg{DirectWriteToPMem: true}, nil)

	require.NotNil(t, dst)
	require.Equal(t, target.Descriptor(), dst.Descriptor(), "the offered region, byte for byte")
	for i := range srcMem {
		srcMem[i] = byte(rand.Uint32())
	}
	for _, w := range []struct{ off, n int }{{0, 1}, {8, 4096}, {60000, 5536}} {
		require.NoError(t, session.WriteAndPersist(ctx, client, dst, w.off, src, w.off, w.n))
		require.Equal(t, srcMem[w.off:w.off+w.n], targetMem[w.off:w.off+w.n], "bytes [%d, +%d) arrived", w.off, w.n)
	}
	require.Equal(t, make([]byte, 7), targetMem[1:8], "nothing else was written")

	done := make(chan error, 1)
	go func() { done <- session.WaitForHangup(ctx, server) }()
	start := time.Now()
	require.NoError(t, session.Hangup(ctx, client))
	require.NoError(t, <-done)
	require.Less(t, time.Since(start), fixture.Bound)
	t.Logf("hangup took %v", time.Since(start))
}

// TestIntegrationPersistRefused: without direct write to pmem declared,
// or with a region not registered for persistent flushes, WriteAndPersist
// refuses before posting (ErrNotSupported) and nothing is written.
func TestIntegrationPersistRefused(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	src, srcMem := fixture.Region(t, p, 4096, mr.UsageWriteSrc)
	copy(srcMem, "not durable")
	for _, c := range []struct {
		name  string
		usage mr.Usage
		pcfg  peer.Cfg
	}{
		{"no direct write to pmem", mr.UsageWriteDst | mr.UsageFlushPersistent | mr.UsageFlushVisibility, peer.Cfg{}},
		{"no persistent flush usage", mr.UsageWriteDst | mr.UsageFlushVisibility, peer.Cfg{DirectWriteToPMem: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, targetMem := fixture.Region(t, p, 4096, c.usage)
			client, _, dst := pair(t, p, ip, target, c.pcfg, nil)
			err := session.WriteAndPersist(ctx, client, dst, 0, src, 0, 11)
			require.ErrorIs(t, err, rpma.ErrNotSupported)
			// The connection is still fine: a visible flush works.
			require.NoError(t, client.WriteAndFlush(dst, 0, src, 0, 4, rpma.FlushVisibility, rpma.CompletionAlways, 7))
			_, err = session.WaitFor(ctx, client.CQ(), 7)
			require.NoError(t, err)
			require.Equal(t, "not ", string(targetMem[:4]))
			require.Equal(t, make([]byte, 7), targetMem[4:11], "the refused write was not posted")
		})
	}
}

// TestIntegrationServe: Serve on a fixed port for one client; the client
// retries while the server is not listening yet (REJECTED).
func TestIntegrationServe(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	target, targetMem := fixture.Region(t, p, 4096, mr.UsageWriteDst|mr.UsageFlushVisibility)
	src, srcMem := fixture.Region(t, p, 4096, mr.UsageWriteSrc)
	port := fmt.Sprint(20000 + rand.IntN(20000))
	srv := make(chan accepted, 1)
	go func() {
		c, err := session.Serve(ctx, p, ip, port, target, peer.Cfg{})
		srv <- accepted{c, err}
	}()
	var client *conn.Conn
	var dst *mr.Remote
	for deadline := time.Now().Add(fixture.Bound); ; {
		var err error
		client, dst, err = session.Connect(ctx, p, ip, port, nil)
		if err == nil {
			break
		}
		var ee *session.EventError
		require.ErrorAs(t, err, &ee, "only not-yet-listening may fail: %v", err)
		require.Equal(t, rpma.ConnRejected, ee.Event)
		require.True(t, time.Now().Before(deadline), "not served within %v", fixture.Bound)
		time.Sleep(50 * time.Millisecond)
	}
	defer func() { require.NoError(t, client.Close()) }()
	a := <-srv
	require.NoError(t, a.err)
	defer func() { require.NoError(t, a.c.Close()) }()

	copy(srcMem, "served")
	require.NoError(t, client.WriteAndFlush(dst, 0, src, 0, 6, rpma.FlushVisibility, rpma.CompletionAlways, 1))
	_, err := session.WaitFor(ctx, client.CQ(), 1)
	require.NoError(t, err)
	require.Equal(t, "served", string(targetMem[:6]))
	hung := make(chan error, 1)
	go func() { hung <- session.Hangup(ctx, client) }()
	require.NoError(t, session.WaitForHangup(ctx, a.c))
	require.NoError(t, <-hung)
}

// TestIntegrationConnectRejected: nobody listens: an *EventError with
// REJECTED, promptly.
func TestIntegrationConnectRejected(t *testing.T) {
	p, ip := fixture.Peer(t)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	port := e.Port()
	require.NoError(t, e.Shutdown())
	start := time.Now()
	_, _, err = session.Connect(fixture.Ctx(t), p, ip, port, nil)
	var ee *session.EventError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, rpma.ConnRejected, ee.Event)
	require.Equal(t, "connect", ee.Op)
	require.Less(t, time.Since(start), fixture.Bound)
	t.Logf("%v after %v", err, time.Since(start))
}

// TestIntegrationWaitFor: WaitFor returns the completion of its op
// context and nothing else: another op context's completion is left for
// its owner (WaitFor used to fail on it, which let one goroutine's wait
// consume another's completion); a failure of its own is a
// *rpma.WCError; nothing outstanding ends with the context, within its
// deadline.
func TestIntegrationWaitFor(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	// Write only: a flush usage would ask for remote read (the emulated
	// flush reads), and the forged read below must be refused.
	target, _ := fixture.Region(t, p, 4096, mr.UsageWriteDst)
	local, _ := fixture.Region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
	client, _, dst := pair(t, p, ip, target, peer.Cfg{}, nil)

	require.NoError(t, client.Write(dst, 0, local, 0, 8, rpma.CompletionAlways, 5))
	wc, err := session.WaitFor(ctx, client.CQ(), 5)
	require.NoError(t, err)
	require.Equal(t, rpma.WCRDMAWrite, wc.Opcode)

	require.NoError(t, client.Write(dst, 0, local, 0, 8, rpma.CompletionAlways, 6))
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = session.WaitFor(short, client.CQ(), 5)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "op context 6's completion is not 5's")
	wc, err = session.WaitFor(ctx, client.CQ(), 6)
	require.NoError(t, err, "6's completion stayed for its owner")
	require.Equal(t, uint64(6), wc.OpContext)

	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	_, err = session.WaitFor(short, client.CQ(), 9)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), fixture.Bound)

	// A read the server's registration does not allow (the descriptor
	// claims UsageReadSrc; the device refuses).
	d := dst.Descriptor()
	d[mr.DescriptorSize-1] |= byte(mr.UsageReadSrc)
	forged, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	require.NoError(t, client.Read(local, 0, forged, 0, 8, rpma.CompletionAlways, 10))
	wc, err = session.WaitFor(ctx, client.CQ(), 10)
	var wce *rpma.WCError
	require.ErrorAs(t, err, &wce)
	require.Equal(t, rpma.WCRemAccessErr, wce.Status)
	require.ErrorIs(t, err, rpma.ErrCompletion)
	require.Equal(t, uint64(10), wc.OpContext)
}

// TestIntegrationMessagesNoRegion: a server that offers no region (only
// its peer configuration): Connect gives a nil region, and the pair
// exchanges a message (a send that comes before the receive is posted is
// retried: RNR).
func TestIntegrationMessagesNoRegion(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	buf, mem := fixture.Region(t, p, 4096, mr.UsageSend|mr.UsageRecv)
	client, server, dst := pair(t, p, ip, nil, peer.Cfg{}, nil)
	require.Nil(t, dst)

	require.NoError(t, server.Recv(buf, 1024, 64, 1))
	copy(mem, "ping")
	require.NoError(t, client.Send(buf, 0, 4, rpma.CompletionAlways, 2))
	_, err := session.WaitFor(ctx, client.CQ(), 2)
	require.NoError(t, err)
	wc, err := session.WaitFor(ctx, server.CQ(), 1)
	require.NoError(t, err)
	require.Equal(t, rpma.WCRecv, wc.Opcode)
	require.Equal(t, uint32(4), wc.ByteLen)
	require.Equal(t, "ping", string(mem[1024:1028]))
}

// TestIntegrationHangupEndsWaits: after the other side hangs up, a
// WaitFor blocked on this side ends with the CLOSED event (a
// *rpma.ConnEventError), within the bound.
func TestIntegrationHangupEndsWaits(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	client, server, _ := pair(t, p, ip, nil, peer.Cfg{}, nil)
	waited := make(chan error, 1)
	go func() {
		_, err := session.WaitFor(ctx, server.CQ(), 1)
		waited <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	hung := make(chan error, 1)
	go func() { hung <- session.Hangup(ctx, client) }()
	select {
	case err := <-waited:
		var ce *rpma.ConnEventError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, rpma.ConnClosed, ce.Event)
	case <-time.After(fixture.Bound):
		t.Fatalf("WaitFor did not end within %v of the hangup", fixture.Bound)
	}
	require.NoError(t, server.Disconnect())
	require.NoError(t, <-hung)
	t.Logf("ended after %v", time.Since(start))
}
