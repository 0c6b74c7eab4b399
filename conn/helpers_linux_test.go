//go:build linux && cgo

package conn_test

import (
	"context"
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

// waitBound is the generous bound of every wait in the VM (TCG emulation
// is 10-50x slower than hardware).
const waitBound = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

// newPeer returns a peer on the test address's device, closed (with its
// device) when the test ends.
func newPeer(t *testing.T) (*peer.Peer, string) { return fixture.Peer(t) }

// listen listens on a free port until the test ends.
func listen(t *testing.T, p *peer.Peer, ip string) *ep.Endpoint { return fixture.Listen(t, p, ip) }

// listen2 listens on a free port; the caller closes the endpoint.
func listen2(t *testing.T, p *peer.Peer, ip string) *ep.Endpoint {
	t.Helper()
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	return e
}

// newPeerIP returns the test address, for tests that manage their own
// device and peer.
func newPeerIP(t *testing.T) string { return rdmatest.IP(t) }

type result[T any] struct {
	v   T
	err error
}

// accept runs the passive side in a goroutine: next request, accept with
// pdata, and returns the request's private data and the connection.
func accept(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, pdata []byte) <-chan result[*conn.Conn] {
	out := make(chan result[*conn.Conn], 1)
	go func() {
		req, err := e.NextConnReq(ctx, cfg)
		if err != nil {
			out <- result[*conn.Conn]{err: err}
			return
		}
		c, err := req.Connect(pdata)
		out <- result[*conn.Conn]{v: c, err: err}
	}()
	return out
}

// pair connects a client to e and returns both established connections,
// closed when the test ends.
func pair(t *testing.T, p *peer.Peer, e *ep.Endpoint, ip string, cpdata, spdata []byte) (client, server *conn.Conn) {
	t.Helper()
	ctx := testCtx(t)
	srv := accept(ctx, e, nil, spdata)
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	client, err = req.Connect(cpdata)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close()) })
	r := <-srv
	require.NoError(t, r.err)
	server = r.v
	t.Cleanup(func() { require.NoError(t, server.Close()) })

	// The connecting side first: librdmacm completes the connection (QP to
	// RTS, then RTU to the other side) when its NextEvent reads the
	// CONNECT_RESPONSE, so the accepting side's ESTABLISHED comes after.
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	return client, server
}
