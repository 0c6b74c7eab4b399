//go:build linux && cgo

package ep_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

const (
	waitBound   = 30 * time.Second
	cancelBound = 5 * time.Second
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

// helperPeer opens, in a test's second process, the device of ip and a
// peer on it; closePeer closes both.
func helperPeer(ip string) (p *peer.Peer, closePeer func(), err error) {
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	if err != nil {
		return nil, nil, err
	}
	if p, err = peer.New(dev); err != nil {
		dev.Close()
		return nil, nil, err
	}
	return p, func() { p.Close(); dev.Close() }, nil
}

// helperFail reports err on stderr; it returns a helper's failure status.
func helperFail(err error) int {
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// newPeer is a peer on the test device and the test address.
func newPeer(t *testing.T) (*peer.Peer, string) { return fixture.Peer(t) }

// connect connects a client to addr:port and accepts it on e; both
// connections are established and closed when the test ends.
func connect(t *testing.T, p *peer.Peer, e *ep.Endpoint, addr string) (client, server *conn.Conn) {
	t.Helper()
	ctx := testCtx(t)
	type res struct {
		c   *conn.Conn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		req, err := e.NextConnReq(ctx, nil)
		if err != nil {
			srv <- res{err: err}
			return
		}
		c, err := req.Connect([]byte("server"))
		srv <- res{c, err}
	}()
	req, err := conn.NewRequest(ctx, p, addr, e.Port(), nil)
	require.NoError(t, err)
	client, err = req.Connect([]byte("client"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close()) })
	r := <-srv
	require.NoError(t, r.err)
	server = r.c
	t.Cleanup(func() { require.NoError(t, server.Close()) })
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	require.Equal(t, "server", string(client.PrivateData()[:6]))
	require.Equal(t, "client", string(server.PrivateData()[:6]))
	return client, server
}

// disconnect runs the full disconnection, checking CLOSED on both sides.
func disconnect(t *testing.T, client, server *conn.Conn) {
	t.Helper()
	ctx := testCtx(t)
	require.NoError(t, client.Disconnect())
	ev, err := server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
	require.NoError(t, server.Disconnect())
	ev, err = client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
}

func TestIntegrationListenFixedPort(t *testing.T) {
	p, ip := newPeer(t)
	e, err := ep.Listen(p, ip, "7204")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Shutdown()) }()
	require.Equal(t, "7204", e.Port())
	require.Equal(t, netip.MustParseAddrPort(ip+":7204"), e.Addr())
	require.GreaterOrEqual(t, e.FD(), 0)

	// The port is taken now.
	_, err = ep.Listen(p, ip, "7204")
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.EADDRINUSE)

	client, server := connect(t, p, e, ip)
	disconnect(t, client, server)
}

func TestIntegrationListenPortZero(t *testing.T) {
	p, ip := newPeer(t)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	require.NotEqual(t, "0", e.Port())
	require.NotZero(t, e.Addr().Port())
	require.Equal(t, ip, e.Addr().Addr().String())
	t.Logf("port 0 bound %v", e.Addr())

	e2, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e2.Close()) }()
	require.NotEqual(t, e.Port(), e2.Port(), "two free ports")

	client, server := connect(t, p, e, ip)
	disconnect(t, client, server)
}

func TestIntegrationListenErrors(t *testing.T) {
	p, _ := newPeer(t)
	for _, tc := range []struct{ addr, port string }{
		{"198.51.100.1", "0"}, // not an address of this host
		{"no-such-host.invalid", "0"},
		{"192.0.2.1", "no-such-service"},
	} {
		_, err := ep.Listen(p, tc.addr, tc.port)
		require.ErrorIs(t, err, rpma.ErrProvider, "%s:%s", tc.addr, tc.port)
		t.Logf("listen %s:%s: %v", tc.addr, tc.port, err)
	}
}

func TestIntegrationCancelNextConnReq(t *testing.T) {
	p, ip := newPeer(t)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()

	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := e.NextConnReq(ctx, nil)
			done <- err
		}()
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			lat := time.Since(start)
			require.Same(t, context.Canceled, err)
			t.Logf("NextConnReq returned %v after the cancel", lat)
		case <-time.After(cancelBound):
			t.Fatalf("NextConnReq did not return within %v of the cancel", cancelBound)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = e.NextConnReq(ctx, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The endpoint still works after cancelled waits.
	client, server := connect(t, p, e, ip)
	disconnect(t, client, server)
}

func TestIntegrationCloseWakesNextConnReq(t *testing.T) {
	p, ip := newPeer(t)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := e.NextConnReq(context.Background(), nil)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, e.Shutdown())
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrClosed)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	case <-time.After(cancelBound):
		t.Fatal("Shutdown did not wake NextConnReq")
	}
	require.NoError(t, e.Shutdown())
	require.NoError(t, e.Close())
	require.Equal(t, -1, e.FD())
	_, err = e.NextConnReq(context.Background(), nil)
	require.ErrorIs(t, err, os.ErrClosed)
}

// TestIntegrationShutdownWithLiveConnection: connections, and requests not
// yet accepted, survive the endpoint's shutdown.
func TestIntegrationShutdownWithLiveConnection(t *testing.T) {
	p, ip := newPeer(t)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	client, server := connect(t, p, e, ip)

	// A second client whose request is pending on the server side.
	ctx := testCtx(t)
	req2, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	client2, err := req2.Connect(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, client2.Close()) }()
	pending, err := e.NextConnReq(ctx, nil)
	require.NoError(t, err)

	require.NoError(t, e.Shutdown())

	// New connections are refused now.
	req3, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	client3, err := req3.Connect(nil)
	require.NoError(t, err)
	ev, err := client3.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnRejected, ev)
	require.NoError(t, client3.Close())

	// The pending request can still be accepted.
	server2, err := pending.Connect(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, server2.Close()) }()
	ev, err = client2.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = server2.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)

	// Both connections still disconnect cleanly.
	disconnect(t, client, server)
	disconnect(t, client2, server2)
}

// rdmaNetdev returns the network interface of the test device.
func rdmaNetdev(t *testing.T) string {
	t.Helper()
	matches, err := filepath.Glob("/sys/class/infiniband/*/ports/1/gid_attrs/ndevs/0")
	require.NoError(t, err)
	require.NotEmpty(t, matches)
	b, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// TestIntegrationIPv6 listens on and connects to an IPv6 address. rxe
// cannot carry traffic over the loopback interface, so ::1 can be listened
// on but not connected to (checked below, with 127.0.0.1); the test adds a
// ULA address to the rxe netdev instead (inside the throwaway VM only).
func TestIntegrationIPv6(t *testing.T) {
	p, _ := newPeer(t)
	if rdmatest.Kernel() == "" {
		t.Skip("adds an address to the RDMA netdev: only inside the rxevm VM")
	}
	ipCmd, err := exec.LookPath("ip")
	require.NoError(t, err)
	const addr6 = "fd00:192:0:2::1"
	dev := rdmaNetdev(t)
	out, err := exec.Command(ipCmd, "-6", "addr", "add", addr6+"/64", "dev", dev, "nodad").CombinedOutput()
	require.NoError(t, err, "%s", out)

	// rxe learns the address (a new GID) asynchronously.
	var e *ep.Endpoint
	require.Eventually(t, func() bool {
		e, err = ep.Listen(p, addr6, "0")
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "listen on %s: %v", addr6, err)
	defer func() { require.NoError(t, e.Close()) }()
	require.True(t, e.Addr().Addr().Is6())
	require.Equal(t, netip.MustParseAddr(addr6), e.Addr().Addr())
	require.NotZero(t, e.Addr().Port())

	client, server := connect(t, p, e, addr6)
	require.Equal(t, netip.MustParseAddr(addr6), client.PeerAddr().Addr())
	require.True(t, server.PeerAddr().Addr().Is6())
	disconnect(t, client, server)

	// Loopback: rdma_cm binds ::1 (and 127.0.0.1) without a device, so
	// listening works, but rxe cannot carry loopback traffic: the route
	// resolution of a request fails with ENODEV.
	for _, lo := range []string{"::1", "127.0.0.1"} {
		le, err := ep.Listen(p, lo, "0")
		require.NoError(t, err, lo)
		require.Equal(t, netip.MustParseAddr(lo), le.Addr().Addr())
		require.NotZero(t, le.Addr().Port())
		req, err := conn.NewRequest(testCtx(t), p, lo, le.Port(), nil)
		require.Nil(t, req)
		require.ErrorIs(t, err, rpma.ErrProvider, lo)
		require.ErrorIs(t, err, syscall.ENODEV, lo)
		var oe *rpma.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "rdma_resolve_route", oe.Op)
		t.Logf("request to %s (listening on %v): %v", lo, le.Addr(), err)
		require.NoError(t, le.Close())
	}
}
