//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// pairCfg connects a client built with ccfg to e, accepted with scfg;
// before accepting, prepare (if not nil) runs on the incoming request
// (for pre-connect receives). Both connections are established and
// closed when the test ends.
func pairCfg(t *testing.T, p *peer.Peer, e *ep.Endpoint, ip string, ccfg, scfg *conn.Config,
	prepare func(*conn.ConnReq) error) (client, server *conn.Conn) {
	t.Helper()
	ctx := testCtx(t)
	srv := make(chan result[*conn.Conn], 1)
	go func() {
		req, err := e.NextConnReq(ctx, scfg)
		if err != nil {
			srv <- result[*conn.Conn]{err: err}
			return
		}
		if prepare != nil {
			if err := prepare(req); err != nil {
				req.Close()
				srv <- result[*conn.Conn]{err: err}
				return
			}
		}
		c, err := req.Connect(nil)
		srv <- result[*conn.Conn]{v: c, err: err}
	}()
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), ccfg)
	require.NoError(t, err)
	client, err = req.Connect(nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close()) })
	r := <-srv
	require.NoError(t, r.err)
	server = r.v
	t.Cleanup(func() { require.NoError(t, server.Close()) })
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	ev, err = server.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	return client, server
}

// region allocates size bytes of DRAM and registers them for usage; both
// are released when the test ends.
func region(t *testing.T, p *peer.Peer, size int, usage mr.Usage) (*mr.Local, []byte) {
	return fixture.Region(t, p, size, usage)
}

// remoteOf is what the other side gets from m's descriptor.
func remoteOf(t *testing.T, m *mr.Local) *mr.Remote {
	t.Helper()
	d := m.Descriptor()
	r, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	return r
}

// forgedRemoteOf is remoteOf with extra usage bits claimed in the
// descriptor: the remote side's registration does not grant them, so the
// library's checks pass and the device refuses the access, as with a
// peer whose descriptor lies.
func forgedRemoteOf(t *testing.T, m *mr.Local, claim mr.Usage) *mr.Remote {
	t.Helper()
	d := m.Descriptor()
	d[mr.DescriptorSize-1] |= byte(claim)
	r, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	return r
}

// nextWC returns the next completion of q: poll, else wait and poll
// again.
func nextWC(t *testing.T, ctx context.Context, q *cq.CQ) cq.WC {
	t.Helper()
	wc, err := tryNextWC(ctx, q)
	require.NoError(t, err)
	return wc
}

func tryNextWC(ctx context.Context, q *cq.CQ) (cq.WC, error) {
	var wc [1]cq.WC
	for {
		n, err := q.GetWC(wc[:])
		if n == 1 {
			return wc[0], nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return cq.WC{}, err
		}
		if err := q.Wait(ctx); err != nil {
			return cq.WC{}, err
		}
	}
}

// flushOp is the opcode of c's flush completions: IBV_WC_FLUSH for a
// native flush, IBV_WC_RDMA_READ for the emulated one (an RDMA read).
func flushOp(c *conn.Conn) rpma.WCOpcode {
	if c.NativeFlush() {
		return rpma.WCFlush
	}
	return rpma.WCRDMARead
}

// okWC returns the next completion of q and checks it succeeded with op
// and opContext.
func okWC(t *testing.T, ctx context.Context, q *cq.CQ, op rpma.WCOpcode, opContext uint64) cq.WC {
	t.Helper()
	wc := nextWC(t, ctx, q)
	require.NoError(t, wc.Err())
	require.Equal(t, op, wc.Opcode)
	require.Equal(t, opContext, wc.OpContext)
	return wc
}

// nativeAtomicWriteExpected reports whether the test kernel's rxe does
// atomic write natively (Linux 6.2 and later); outside the VM it reads
// the running kernel.
func nativeAtomicWriteExpected(t *testing.T) bool {
	rel := rdmatest.Kernel()
	if rel == "" {
		var u syscall.Utsname
		require.NoError(t, syscall.Uname(&u))
		b := make([]byte, 0, len(u.Release))
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		rel = string(b)
	}
	var major, minor int
	_, err := fmt.Sscanf(rel, "%d.%d", &major, &minor)
	require.NoError(t, err, rel)
	return major > 6 || (major == 6 && minor >= 2)
}
