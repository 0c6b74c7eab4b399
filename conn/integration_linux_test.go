//go:build linux && cgo

package conn_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// cancelBound is the generous bound a cancelled wait must return within.
const cancelBound = 5 * time.Second

func TestIntegrationConnectPrivateData(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	cp := []byte("hello from the client")
	sp := []byte("hello from the server, a little longer")
	client, server := pair(t, p, e, ip, cp, sp)

	// rdma_cm pads private data to what the CM message carries: 56 bytes
	// in a request, 196 in an accept. The sent bytes come first, then
	// zeros.
	got := server.PrivateData()
	require.Len(t, got, conn.MaxConnectPrivateData)
	require.Equal(t, cp, got[:len(cp)])
	require.Equal(t, make([]byte, len(got)-len(cp)), got[len(cp):])
	got = client.PrivateData()
	require.Len(t, got, conn.MaxAcceptPrivateData)
	require.Equal(t, sp, got[:len(sp)])
	require.Equal(t, make([]byte, len(got)-len(sp)), got[len(sp):])

	// PrivateData returns a copy.
	got[0] ^= 0xff
	require.Equal(t, sp, client.PrivateData()[:len(sp)])

	require.NotZero(t, client.QPNum())
	require.NotZero(t, server.QPNum())
	require.NotEqual(t, client.QPNum(), server.QPNum())
	require.Equal(t, ip, client.PeerAddr().Addr().String())
	require.Equal(t, e.Port(), fmt.Sprint(client.PeerAddr().Port()))
	require.Equal(t, client.LocalAddr(), server.PeerAddr())
}

func TestIntegrationPrivateDataLimits(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)

	cp := bytes.Repeat([]byte{0xc1}, conn.MaxConnectPrivateData)
	sp := bytes.Repeat([]byte{0x5e}, conn.MaxAcceptPrivateData)

	type srvResult struct {
		tooLong error
		c       *conn.Conn
		err     error
	}
	srv := make(chan srvResult, 1)
	go func() {
		req, err := e.NextConnReq(ctx, nil)
		if err != nil {
			srv <- srvResult{err: err}
			return
		}
		// One byte too many: refused before anything is posted, and the
		// request is still there to accept.
		_, tooLong := req.Connect(append(sp, 0))
		c, err := req.Connect(sp)
		srv <- srvResult{tooLong: tooLong, c: c, err: err}
	}()

	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	_, err = req.Connect(append(cp, 0))
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "57 bytes of private data, at most 56 on connect")
	client, err := req.Connect(cp) // the request survived the argument error
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close()) }()

	r := <-srv
	require.NoError(t, r.err)
	defer func() { require.NoError(t, r.c.Close()) }()
	require.ErrorIs(t, r.tooLong, rpma.ErrInvalidArgument)
	require.Contains(t, r.tooLong.Error(), "197 bytes of private data, at most 196 on accept")

	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = r.c.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	require.Equal(t, cp, r.c.PrivateData())
	require.Equal(t, sp, client.PrivateData())
}

// TestIntegrationEventSequence walks librpma's documented sequences:
// client: connect, ESTABLISHED, disconnect, CLOSED, delete;
// server: ESTABLISHED, CLOSED, disconnect, delete.
func TestIntegrationEventSequence(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, server := pair(t, p, e, ip, nil, nil) // ESTABLISHED on both
	ctx := testCtx(t)

	require.NoError(t, client.Disconnect())
	ev, err := server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev, "server sees the client's disconnect")
	require.NoError(t, server.Disconnect())
	ev, err = client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev, "client's disconnect completes")

	// Anything after CLOSED (rdma_cm's TIMEWAIT_EXIT) maps to CLOSED too.
	for _, c := range []*conn.Conn{client, server} {
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		ev, err := c.NextEvent(short)
		cancel()
		if err == nil {
			require.Equal(t, rpma.ConnClosed, ev)
		} else {
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
		t.Logf("after CLOSED: %v, %v", ev, err)
	}
}

func TestIntegrationReject(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	done := make(chan error, 1)
	go func() {
		req, err := e.NextConnReq(ctx, nil)
		if err == nil {
			err = req.Reject()
			if err == nil {
				err = req.Close() // a no-op now
			}
		}
		done <- err
	}()
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	c, err := req.Connect([]byte("let me in"))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	require.NoError(t, <-done)
	ev, err := c.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnRejected, ev)
}

// TestIntegrationConnectToNothing: rxe answers a connection request for a
// port nobody listens on with a CM reject (IB_CM_REJ_INVALID_SERVICE_ID),
// which librpma reports as REJECTED.
func TestIntegrationConnectToNothing(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)
	req, err := conn.NewRequest(ctx, p, ip, "7999", nil)
	require.NoError(t, err)
	c, err := req.Connect(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	ev, err := c.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnRejected, ev)
}

// TestIntegrationNoRoute: an address no interface routes to fails the
// address resolution at once, with ENETUNREACH.
func TestIntegrationNoRoute(t *testing.T) {
	p, _ := newPeer(t)
	ctx := testCtx(t)
	req, err := conn.NewRequest(ctx, p, "198.51.100.1", "7999", nil)
	require.Nil(t, req)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.ENETUNREACH)
	var oe *rpma.OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "rdma_resolve_addr", oe.Op)
	t.Logf("no route: %v", err)
}

func TestIntegrationBadAddress(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)
	for _, tc := range []struct{ addr, port string }{
		{"no-such-host.invalid", "7204"},
		{ip, "no-such-service"},
	} {
		req, err := conn.NewRequest(ctx, p, tc.addr, tc.port, nil)
		require.Nil(t, req)
		require.ErrorIs(t, err, rpma.ErrProvider, "%s:%s", tc.addr, tc.port)
		t.Logf("%s:%s: %v", tc.addr, tc.port, err)
	}
}

func TestIntegrationConfig(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)

	cfg := conn.DefaultConfig()
	cfg.CQSize = 20
	cfg.RCQSize = 5
	cfg.SharedCompChannel = true
	cfg.RetryCount = 3
	cfg.RNRRetryCount = 2
	srv := accept(ctx, e, cfg, nil)
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil) // defaults: no RCQ
	require.NoError(t, err)
	client, err := req.Connect(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close()) }()
	r := <-srv
	require.NoError(t, r.err)
	server := r.v
	defer func() { require.NoError(t, server.Close()) }()

	require.Nil(t, client.RCQ())
	require.NotNil(t, client.CQ())
	require.GreaterOrEqual(t, client.CQ().Size(), conn.DefaultCQSize)
	require.GreaterOrEqual(t, client.CQ().FD(), 0)
	require.NotNil(t, server.RCQ())
	require.GreaterOrEqual(t, server.CQ().Size(), 20)
	require.GreaterOrEqual(t, server.RCQ().Size(), 5)
	require.Equal(t, server.CQ().FD(), server.RCQ().FD(), "shared completion channel")
	require.NotEqual(t, server.CQ().FD(), server.EventFD())

	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)

	// Sizes beyond the device's limits are invalid arguments, not
	// provider errors.
	big := conn.DefaultConfig()
	big.CQSize = 1 << 30
	_, err = conn.NewRequest(ctx, p, ip, e.Port(), big)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "max_cqe")
	big = conn.DefaultConfig()
	big.SQSize = 1 << 30
	_, err = conn.NewRequest(ctx, p, ip, e.Port(), big)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "max_qp_wr")
	bad := conn.DefaultConfig()
	bad.RetryCount = 8
	_, err = conn.NewRequest(ctx, p, ip, e.Port(), bad)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
}

func TestIntegrationApplyRemotePeerCfg(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	desc := peer.Cfg{DirectWriteToPMem: true}.Descriptor()
	client, server := pair(t, p, e, ip, nil, desc[:])

	require.False(t, (*core.Conn)(client).DirectWriteToPMem(), "default false")
	cfg, err := peer.CfgFromDescriptor(client.PrivateData())
	require.NoError(t, err)
	require.NoError(t, client.ApplyRemotePeerCfg(cfg))
	require.True(t, (*core.Conn)(client).DirectWriteToPMem())
	require.NoError(t, client.ApplyRemotePeerCfg(peer.Cfg{}))
	require.False(t, (*core.Conn)(client).DirectWriteToPMem())
	_ = server
}

// measureCancel cancels a blocked wait after 100 ms and returns how long
// the wait took to return after the cancel.
func measureCancel(t *testing.T, wait func(ctx context.Context) error) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- wait(ctx) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("wait returned before the cancel: %v", err)
	default:
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		lat := time.Since(start)
		require.ErrorIs(t, err, context.Canceled)
		require.Same(t, context.Canceled, err, "ctx.Err() itself")
		return lat
	case <-time.After(cancelBound):
		t.Fatalf("wait did not return within %v of the cancel", cancelBound)
	}
	return 0
}

func TestIntegrationCancelNextEvent(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, server := pair(t, p, e, ip, nil, nil)
	for name, c := range map[string]*conn.Conn{"client": client, "server": server} {
		lat := measureCancel(t, func(ctx context.Context) error {
			_, err := c.NextEvent(ctx)
			return err
		})
		t.Logf("%s NextEvent: returned %v after the cancel", name, lat)
	}

	// A deadline ends the wait with context.DeadlineExceeded.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := client.NextEvent(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// A cancelled wait leaves the connection working.
	require.NoError(t, client.Disconnect())
	ev, err := server.NextEvent(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
}

// TestIntegrationDisconnectWhileWaiting: one goroutine waits in NextEvent
// while another disconnects the same connection, the typical shutdown of a
// server loop.
func TestIntegrationDisconnectWhileWaiting(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, server := pair(t, p, e, ip, nil, nil)
	ctx := testCtx(t)

	type evErr struct {
		ev  rpma.ConnEvent
		err error
	}
	waiting := make(chan evErr, 1)
	go func() {
		ev, err := server.NextEvent(ctx)
		waiting <- evErr{ev, err}
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, server.Disconnect()) // while the goroutine waits

	// The client sees the disconnect and completes it, which ends the
	// server's wait with CLOSED.
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
	require.NoError(t, client.Disconnect())
	r := <-waiting
	require.NoError(t, r.err)
	require.Equal(t, rpma.ConnClosed, r.ev)
}

func TestIntegrationCloseWakesNextEvent(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pair(t, p, e, ip, nil, nil)
	done := make(chan error, 1)
	go func() {
		_, err := client.NextEvent(context.Background())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, client.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrClosed)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	case <-time.After(cancelBound):
		t.Fatal("Close did not wake NextEvent")
	}
	_, err := client.NextEvent(context.Background())
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, client.Disconnect(), os.ErrClosed)
	require.Equal(t, -1, client.EventFD())
	require.Equal(t, -1, client.CQ().FD())
}

func TestIntegrationDoubleClose(t *testing.T) {
	ip := newPeerIP(t)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(t, err)
	p, err := peer.New(dev)
	require.NoError(t, err)
	e := listen2(t, p, ip)
	ctx := testCtx(t)

	srv := accept(ctx, e, nil, nil)
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	client, err := req.Connect(nil)
	require.NoError(t, err)
	require.NoError(t, req.Close(), "Close after Connect is a no-op")
	_, err = req.Connect(nil)
	require.ErrorIs(t, err, os.ErrClosed, "a consumed request")
	r := <-srv
	require.NoError(t, r.err)

	// An unused request, closed twice.
	req2, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	require.NoError(t, req2.Close())
	require.NoError(t, req2.Close())

	err = p.Close()
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.EBUSY)
	require.Contains(t, err.Error(), "3 object(s)") // endpoint + 2 conns

	for i := 0; i < 2; i++ {
		require.NoError(t, client.Close())
		require.NoError(t, r.v.Close())
		require.NoError(t, e.Close())
		require.NoError(t, e.Shutdown())
		require.NoError(t, p.Close())
		require.NoError(t, dev.Close())
	}
	var nilConn *conn.Conn
	require.NoError(t, nilConn.Close())
	var nilReq *conn.ConnReq
	require.NoError(t, nilReq.Close())
	_, err = conn.NewRequest(ctx, p, ip, "7204", nil)
	require.ErrorIs(t, err, os.ErrClosed, "closed peer")
}

// TestIntegrationConcurrentClients connects several clients at once, each
// in its own goroutine, to one endpoint.
func TestIntegrationConcurrentClients(t *testing.T) {
	const n = 4
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)

	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	clients := make(chan *conn.Conn, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
			if err != nil {
				errs <- err
				return
			}
			c, err := req.Connect([]byte{byte(i)})
			if err != nil {
				errs <- err
				return
			}
			clients <- c
			ev, err := c.NextEvent(ctx)
			if err == nil && ev != rpma.ConnEstablished {
				err = fmt.Errorf("client %d: %v", i, ev)
			}
			errs <- err
		}()
	}
	seen := map[byte]bool{}
	var servers []*conn.Conn
	for i := 0; i < n; i++ {
		req, err := e.NextConnReq(ctx, nil)
		require.NoError(t, err)
		seen[req.PrivateData()[0]] = true
		c, err := req.Connect(nil)
		require.NoError(t, err)
		servers = append(servers, c)
	}
	wg.Wait()
	close(errs)
	close(clients)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, c := range servers {
		ev, err := c.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev)
	}
	require.Len(t, seen, n)
	for c := range clients {
		require.NoError(t, c.Close())
	}
	for _, c := range servers {
		require.NoError(t, c.Close())
	}
}
