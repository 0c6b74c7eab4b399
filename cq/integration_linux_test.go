//go:build linux && cgo

package cq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// connection returns an established client connection built with cfg,
// its server side, and a cleanup.
func connection(t *testing.T, cfg *conn.Config) (client, server *conn.Conn) {
	t.Helper()
	ip := rdmatest.IP(t)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(t, err)
	p, err := peer.New(dev)
	require.NoError(t, err)
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(func() {
		cancel()
		require.NoError(t, e.Close())
		require.NoError(t, p.Close())
		require.NoError(t, dev.Close())
	})
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
		c, err := req.Connect(nil)
		srv <- res{c, err}
	}()
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), cfg)
	require.NoError(t, err)
	client, err = req.Connect(nil)
	require.NoError(t, err)
	r := <-srv
	require.NoError(t, r.err)
	server = r.c
	t.Cleanup(func() {
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
	})
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	return client, server
}

func nonblocking(t *testing.T, fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	return fl&unix.O_NONBLOCK != 0
}

func TestIntegrationCQs(t *testing.T) {
	client, _ := connection(t, nil)
	q := client.CQ()
	require.NotNil(t, q)
	require.Nil(t, client.RCQ(), "no receive CQ by default")
	require.GreaterOrEqual(t, q.Size(), conn.DefaultCQSize)
	t.Logf("CQ of %d entries asked, %d got", conn.DefaultCQSize, q.Size())
	require.GreaterOrEqual(t, q.FD(), 0)
	require.True(t, nonblocking(t, q.FD()), "the completion channel fd is non-blocking")
	require.NotEqual(t, client.EventFD(), q.FD())
	require.True(t, nonblocking(t, client.EventFD()), "the event channel fd is non-blocking")
}

func TestIntegrationRCQ(t *testing.T) {
	for _, shared := range []bool{false, true} {
		cfg := conn.DefaultConfig()
		cfg.CQSize = 16
		cfg.RCQSize = 32
		cfg.SharedCompChannel = shared
		client, _ := connection(t, cfg)
		var q, rq *cq.CQ = client.CQ(), client.RCQ()
		require.NotNil(t, rq)
		require.GreaterOrEqual(t, q.Size(), 16)
		require.GreaterOrEqual(t, rq.Size(), 32)
		if shared {
			require.Equal(t, q.FD(), rq.FD(), "one shared channel")
		} else {
			require.NotEqual(t, q.FD(), rq.FD(), "a channel each")
		}
		require.True(t, nonblocking(t, rq.FD()))
	}
}

func TestIntegrationCQClosedWithConn(t *testing.T) {
	client, _ := connection(t, nil)
	q := client.CQ()
	require.NoError(t, client.Close())
	require.Equal(t, -1, q.FD(), "the CQ goes with its connection")
}
