//go:build linux && cgo

package srq_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

func setup(t *testing.T) (*peer.Peer, *ep.Endpoint, string, context.Context) {
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
	return p, e, ip, ctx
}

// connect connects a client (defaults) and accepts it with scfg.
func connect(t *testing.T, ctx context.Context, p *peer.Peer, e *ep.Endpoint, ip string, scfg *conn.Config) (client, server *conn.Conn) {
	t.Helper()
	type res struct {
		c   *conn.Conn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		req, err := e.NextConnReq(ctx, scfg)
		if err != nil {
			srv <- res{err: err}
			return
		}
		c, err := req.Connect(nil)
		srv <- res{c, err}
	}()
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	client, err = req.Connect(nil)
	require.NoError(t, err)
	r := <-srv
	require.NoError(t, r.err)
	server = r.c
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	return client, server
}

func reg(t *testing.T, p *peer.Peer, size int, usage mr.Usage) (*mr.Local, []byte) {
	return fixture.Region(t, p, size, usage)
}

func next(t *testing.T, ctx context.Context, q *cq.CQ) cq.WC {
	t.Helper()
	var wcs [1]cq.WC
	for {
		n, err := q.GetWC(wcs[:])
		if n == 1 {
			require.NoError(t, wcs[0].Err())
			return wcs[0]
		}
		require.ErrorIs(t, err, rpma.ErrNoCompletion)
		require.NoError(t, q.Wait(ctx))
	}
}

// TestIntegrationSRQServesTwo: one SRQ receives for two connections; its
// receive CQ tells them apart by QP number and each message lands in a
// receive buffer of the SRQ.
func TestIntegrationSRQServesTwo(t *testing.T) {
	for _, rcq := range []int{srq.DefaultRCQSize, srq.NoRCQ} {
		t.Run(fmt.Sprintf("RCQSize=%d", rcq), func(t *testing.T) {
			p, e, ip, ctx := setup(t)
			s, err := srq.New(p, &srq.Config{RQSize: 8, RCQSize: rcq})
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			if rcq == srq.NoRCQ {
				require.Nil(t, s.RCQ())
			} else {
				require.NotNil(t, s.RCQ())
			}
			scfg := conn.DefaultConfig()
			scfg.SRQ = s
			if rcq == srq.NoRCQ {
				// Every receive of the SRQ may complete on this
				// connection's CQ: it must have room for them and
				// for the sends.
				_, err := conn.NewRequest(ctx, p, ip, e.Port(), scfg)
				require.ErrorIs(t, err, rpma.ErrInvalidArgument)
				require.Contains(t, err.Error(), "CQSize 10 is below SQSize 10 + the SRQ's RQSize 8")
				scfg.CQSize = scfg.SQSize + 8
			}
			c1, s1 := connect(t, ctx, p, e, ip, scfg)
			c2, s2 := connect(t, ctx, p, e, ip, scfg)
			defer func() {
				for _, c := range []*conn.Conn{c1, s1, c2, s2} {
					require.NoError(t, c.Close())
				}
			}()
			require.Same(t, s, s1.SRQ())
			require.Nil(t, c1.SRQ())

			// While connections use it, the SRQ refuses to close.
			err = s.Close()
			require.ErrorIs(t, err, syscall.EBUSY)
			require.ErrorIs(t, s1.Recv(nil, 0, 0, 1), rpma.ErrInvalidArgument, "receives go through the SRQ")

			rbuf, rmem := reg(t, p, 4096, mr.UsageRecv)
			for i := 0; i < 4; i++ {
				require.NoError(t, s.Recv(rbuf, i*256, 256, uint64(1000+i)))
			}
			sbuf, smem := reg(t, p, 4096, mr.UsageSend)
			copy(smem, "from client one")
			copy(smem[256:], "from client two, longer")
			require.NoError(t, c1.Send(sbuf, 0, 15, rpma.CompletionOnError, 1))
			require.NoError(t, c2.Send(sbuf, 256, 23, rpma.CompletionOnError, 2))

			got := map[uint32]string{}
			for i := 0; i < 2; i++ {
				var wc cq.WC
				if rcq > 0 {
					wc = next(t, ctx, s.RCQ())
				} else {
					// Without an SRQ RCQ the receive completes on the
					// receiving connection's CQ.
					wc = next(t, ctx, []*cq.CQ{s1.CQ(), s2.CQ()}[i])
					require.Equal(t, []*conn.Conn{s1, s2}[i].QPNum(), wc.QPNum)
				}
				require.Equal(t, rpma.WCRecv, wc.Opcode)
				slot := int(wc.OpContext - 1000)
				require.True(t, slot >= 0 && slot < 4, "ctx %d", wc.OpContext)
				got[wc.QPNum] = string(rmem[slot*256 : slot*256+int(wc.ByteLen)])
			}
			require.Equal(t, map[uint32]string{
				s1.QPNum(): "from client one",
				s2.QPNum(): "from client two, longer",
			}, got)

			// The counters: four receives posted; with its own RCQ the
			// SRQ counts the two that completed, else the connections do.
			st := s.Stats()
			require.EqualValues(t, 4, st.Recvs)
			require.Equal(t, 4, st.HighWater)
			require.Zero(t, st.QueueFull)
			if rcq > 0 {
				require.EqualValues(t, 15+23, st.BytesReceived)
				require.EqualValues(t, 2, st.RCQ.Completions)
				require.Equal(t, s.RCQ().Stats(), st.RCQ)
			} else {
				require.Zero(t, st.BytesReceived)
				require.EqualValues(t, 15, s1.Stats().BytesReceived)
				require.EqualValues(t, 23, s2.Stats().BytesReceived)
			}
		})
	}
}

func TestIntegrationSRQRules(t *testing.T) {
	p, e, ip, ctx := setup(t)
	s, err := srq.New(p, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()

	// A shared completion channel with an SRQ that has its own RCQ is
	// refused, as in librpma.
	cfg := conn.DefaultConfig()
	cfg.SRQ = s
	cfg.SharedCompChannel = true
	_, err = conn.NewRequest(ctx, p, ip, e.Port(), cfg)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "shared completion channel")

	// The peer refuses to close while the SRQ exists.
	require.ErrorIs(t, p.Close(), syscall.EBUSY)

	// The SRQ fills.
	s2, err := srq.New(p, &srq.Config{RQSize: 2, RCQSize: 4})
	require.NoError(t, err)
	require.NoError(t, s2.Recv(nil, 0, 0, 1))
	require.NoError(t, s2.Recv(nil, 0, 0, 2))
	require.ErrorIs(t, s2.Recv(nil, 0, 0, 3), rpma.ErrQueueFull)
	require.NoError(t, s2.Close())
	require.NoError(t, s2.Close())
	require.True(t, errors.Is(s2.Recv(nil, 0, 0, 4), rpma.ErrInvalidArgument))

	_, err = srq.New(p, &srq.Config{RQSize: -1, RCQSize: 1})
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
}

// TestIntegrationSRQSlotsSurviveClosedConnections: an SRQ without its
// own receive CQ, whose receives complete on each connection's CQ. 100
// clients each send one message (it has arrived once their send
// completes) and disconnect at once; the server closes each connection
// without polling it. Close must give the consumed receives' slots back
// to the SRQ: before each client the server tops the SRQ up, and at the
// end the SRQ holds exactly its depth of receives. (Before the fix, the
// slots of unpolled completions were lost: after the first 20 clients no
// receive could be posted.)
func TestIntegrationSRQSlotsSurviveClosedConnections(t *testing.T) {
	p, e, ip, _ := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const depth = 20
	s, err := srq.New(p, &srq.Config{RQSize: depth, RCQSize: srq.NoRCQ})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rbuf, _ := reg(t, p, depth*64, mr.UsageRecv)
	sbuf, smem := reg(t, p, 64, mr.UsageSend)
	copy(smem, "one message")
	scfg := conn.DefaultConfig()
	scfg.SRQ = s
	scfg.CQSize = scfg.SQSize + depth
	posted := 0
	topUp := func() int {
		n := 0
		for {
			err := s.Recv(rbuf, (posted%depth)*64, 64, uint64(posted))
			if errors.Is(err, rpma.ErrQueueFull) {
				return n
			}
			require.NoError(t, err)
			posted++
			n++
		}
	}
	require.Equal(t, depth, topUp())
	const clients = 100
	for i := 0; i < clients; i++ {
		if i > 0 {
			require.Equal(t, 1, topUp(), "client %d: the previous client's receive slot came back", i)
		}
		client, server := connect(t, ctx, p, e, ip, scfg)
		require.NoError(t, client.Send(sbuf, 0, 11, rpma.CompletionAlways, 1))
		wc := next(t, ctx, client.CQ())
		require.Equal(t, rpma.WCSend, wc.Opcode)
		require.NoError(t, client.Disconnect())
		ev, err := server.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnClosed, ev)
		require.NoError(t, server.Close()) // its receive completion unpolled
		require.NoError(t, client.Close())
	}
	require.Equal(t, 1, topUp())
	require.Equal(t, depth, posted-clients, "the SRQ holds its full depth of receives")
}

// TestIntegrationSRQFailedRecvBreaksItsConnection: a receive of the SRQ
// that fails (a message longer than its buffer)
// completes on a CQ that is not the connection's own (the SRQ's RCQ), or
// on the connection's CQ without one; either way the connection it
// arrived on is reported broken, like any other whose receive failed, and
// the other connection on the SRQ is not.
func TestIntegrationSRQFailedRecvBreaksItsConnection(t *testing.T) {
	for _, rcq := range []int{srq.DefaultRCQSize, srq.NoRCQ} {
		t.Run(fmt.Sprintf("RCQSize=%d", rcq), func(t *testing.T) {
			p, e, ip, ctx := setup(t)
			s, err := srq.New(p, &srq.Config{RQSize: 8, RCQSize: rcq})
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			scfg := conn.DefaultConfig()
			scfg.SRQ = s
			if rcq == srq.NoRCQ {
				scfg.CQSize = scfg.SQSize + 8
			}
			c1, s1 := connect(t, ctx, p, e, ip, scfg)
			c2, s2 := connect(t, ctx, p, e, ip, scfg)
			defer func() {
				for _, c := range []*conn.Conn{c1, s1, c2, s2} {
					require.NoError(t, c.Close())
				}
			}()
			rbuf, _ := reg(t, p, 4096, mr.UsageRecv)
			require.NoError(t, s.Recv(rbuf, 0, 8, 7))
			sbuf, _ := reg(t, p, 4096, mr.UsageSend)
			require.NoError(t, c1.Send(sbuf, 0, 64, rpma.CompletionOnError, 1), "64 bytes into an 8-byte receive")

			q := s.RCQ()
			if rcq == srq.NoRCQ {
				q = s1.CQ()
			}
			var wcs [1]cq.WC
			for {
				n, err := q.GetWC(wcs[:])
				if n == 1 {
					break
				}
				require.ErrorIs(t, err, rpma.ErrNoCompletion)
				require.NoError(t, q.Wait(ctx))
			}
			require.Equal(t, s1.QPNum(), wcs[0].QPNum)
			// rxe reports IBV_WC_LOC_QP_OP_ERR, other providers
			// IBV_WC_LOC_LEN_ERR: a failure either way.
			require.ErrorIs(t, wcs[0].Err(), rpma.ErrCompletion)
			require.ErrorIs(t, s1.Broken(), rpma.ErrConnBroken, "the connection whose receive failed")
			require.ErrorIs(t, s1.Broken(), &rpma.WCError{Status: wcs[0].Status})
			require.NoError(t, s2.Broken(), "the other connection on the SRQ")
		})
	}
}
