package core

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

func TestMain(m *testing.M) { leak.Main(m) }

func TestMapEvent(t *testing.T) {
	// librpma's rpma_conn_next_event mapping (librpma-reference §2.5).
	want := map[ibv.CMEventType]rpma.ConnEvent{
		ibv.EventEstablished:   rpma.ConnEstablished,
		ibv.EventConnectError:  rpma.ConnLost,
		ibv.EventDeviceRemoval: rpma.ConnLost,
		ibv.EventDisconnected:  rpma.ConnClosed,
		ibv.EventTimewaitExit:  rpma.ConnClosed,
		ibv.EventRejected:      rpma.ConnRejected,
		ibv.EventUnreachable:   rpma.ConnUnreachable,
	}
	for typ := ibv.EventAddrResolved; typ <= ibv.EventTimewaitExit+1; typ++ {
		got, ok := mapEvent(typ)
		w, known := want[typ]
		require.Equal(t, known, ok, "%s", typ)
		if known {
			require.Equal(t, w, got, "%s", typ)
		} else {
			require.Equal(t, rpma.ConnUndefined, got, "%s", typ)
		}
	}
}

func TestClosedError(t *testing.T) {
	err := errClosed("conn_next_event", "connection")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, err, os.ErrClosed)
	code, ok := rpma.CodeOf(err)
	require.True(t, ok)
	require.Equal(t, rpma.CodeInval, code)
	require.Equal(t, "rpma: conn_next_event: Invalid argument (connection is closed)", err.Error())
}

func TestProvider(t *testing.T) {
	require.NoError(t, provider("x", nil))

	err := provider("ep_listen", os.NewSyscallError("rdma_bind_addr", syscall.EADDRINUSE))
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.EADDRINUSE)
	var oe *rpma.OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "rdma_bind_addr", oe.Op)

	err = providerMsg("ep_listen", os.NewSyscallError("rdma_bind_addr", syscall.EADDRINUSE), "addr=%s", "a")
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "addr=a", oe.Msg)
	require.ErrorIs(t, err, syscall.EADDRINUSE)

	err = provider("conn_req_new", &ibv.AddrInfoError{Code: -2, Msg: "Name or service not known"})
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.Contains(t, err.Error(), "Name or service not known")

	err = provider("peer_new", ibv.ErrNotSupported)
	require.ErrorIs(t, err, rpma.ErrNotSupported)

	require.Equal(t, syscall.ETIMEDOUT, statusErrno(-110))
	require.Equal(t, syscall.Errno(28), statusErrno(28))
	require.True(t, isAgain(os.NewSyscallError("rdma_get_cm_event", syscall.EAGAIN)))
	require.False(t, isAgain(os.NewSyscallError("rdma_get_cm_event", syscall.EBADF)))
}

func TestErrList(t *testing.T) {
	var l errList
	require.NoError(t, l.err())
	l.add(nil)
	require.NoError(t, l.err())
	e1 := rpmaerr.Provider("ibv_destroy_cq", syscall.EBUSY)
	l.add(e1)
	require.Same(t, e1, l.err(), "one error is returned as it is")
	e2 := rpmaerr.Provider("rdma_destroy_id", syscall.EINVAL)
	l.add(e2)
	err := l.err()
	require.ErrorIs(t, err, syscall.EBUSY)
	require.ErrorIs(t, err, syscall.EINVAL)
	require.Contains(t, err.Error(), "2 errors occurred")
}

func TestDefaultConnParams(t *testing.T) {
	p := DefaultConnParams()
	require.Equal(t, ConnParams{
		Timeout: time.Second, CQSize: 10, RCQSize: 0, SQSize: 10, RQSize: 10,
		SharedCompChannel: false, RetryCount: 7, RNRRetryCount: 7, SpinLimit: 50 * time.Microsecond,
	}, p)
	got, err := ResolveParams("x", nil)
	require.NoError(t, err)
	require.Equal(t, p, got, "nil: the defaults")
	got, err = ResolveParams("x", &ConnParams{})
	require.NoError(t, err)
	require.Equal(t, p, got, "the zero value: the defaults")
	got, err = ResolveParams("x", &p)
	require.NoError(t, err)
	require.Equal(t, p, got, "the defaults, filled in, stay as they are")

	got, err = ResolveParams("x", &ConnParams{SpinLimit: NoSpin})
	require.NoError(t, err)
	require.Zero(t, got.SpinLimit, "NoSpin resolves to no spin")
	for _, bad := range []time.Duration{-2, MaxSpinLimit + 1} {
		_, err = ResolveParams("x", &ConnParams{SpinLimit: bad})
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, bad)
		require.Contains(t, err.Error(), "SpinLimit")
	}
}

func TestCheckPrivateData(t *testing.T) {
	require.NoError(t, checkPrivateData("c", nil, false))
	require.NoError(t, checkPrivateData("c", make([]byte, 56), false))
	require.ErrorIs(t, checkPrivateData("c", make([]byte, 57), false), rpma.ErrInvalidArgument)
	require.NoError(t, checkPrivateData("c", make([]byte, 196), true))
	err := checkPrivateData("c", make([]byte, 197), true)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "197 bytes of private data, at most 196 on accept")
}

func TestCheckDevice(t *testing.T) {
	p := &Peer{attr: ibv.DeviceAttr{MaxCQE: 100, MaxQPWR: 50}}
	prm := DefaultConnParams()
	require.NoError(t, prm.checkDevice("x", p))
	for _, mod := range []func(*ConnParams){
		func(c *ConnParams) { c.CQSize = 101 },
		func(c *ConnParams) { c.RCQSize = 101 },
		func(c *ConnParams) { c.SQSize = 51 },
		func(c *ConnParams) { c.RQSize = 51 },
	} {
		c := DefaultConnParams()
		mod(&c)
		require.ErrorIs(t, c.checkDevice("x", p), rpma.ErrInvalidArgument)
	}
}

func TestLife(t *testing.T) {
	var l life
	require.False(t, l.enter(), "a zero value was never opened")
	require.True(t, l.closed())
	require.False(t, l.beginClose(), "closing a zero value does nothing")
	l.open()
	require.False(t, l.closed())
	require.True(t, l.enter())
	l.exit()
	require.True(t, l.beginClose())
	require.False(t, l.beginClose(), "only one Close wins")
	require.False(t, l.enter())
	require.True(t, l.closed())
}

// waitErr drops a wait's result.
func waitErr(_ tryResult, err error) error { return err }

func TestNilObjects(t *testing.T) {
	var (
		d *Device
		p *Peer
		r *ConnReq
		c *Conn
		e *Endpoint
		q *CQ
	)
	require.NoError(t, d.Close())
	require.NoError(t, p.Close())
	require.NoError(t, r.Close())
	require.NoError(t, c.Close())
	require.NoError(t, e.Close())
	require.NoError(t, q.close())

	_, err := NewPeer(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = d.ODPCapable()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = Listen(nil, "192.0.2.1", "0", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = NewConnReq(context.Background(), nil, "192.0.2.1", "7204", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = r.Connect(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = c.NextEvent(context.Background())
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, c.Disconnect(), rpma.ErrInvalidArgument)
	require.ErrorIs(t, c.ApplyRemotePeerCfg(true), rpma.ErrInvalidArgument)
	_, err = c.CompFD()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = e.NextConnReq(context.Background(), nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	require.Equal(t, -1, c.EventFD())
	require.Equal(t, -1, e.FD())
	require.Equal(t, -1, q.FD())
	require.Zero(t, c.QPNum())
	require.Nil(t, c.PrivateData())
	require.Nil(t, r.PrivateData())
	require.Nil(t, c.CQ())
	require.Nil(t, c.RCQ())
	require.Zero(t, q.Size())
	require.Empty(t, e.Port())
	require.False(t, p.NativeAtomicWrite())
}

func TestArgumentsBeforeVerbs(t *testing.T) {
	// Every one of these fails before any C call: they run on a host
	// without RDMA and without cgo.
	_, err := DeviceForAddress("", rpma.IbvContextLocal)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = DeviceForAddress("192.0.2.1", rpma.UtilIbvContextType(2))
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	p := &Peer{} // stands in for an open peer
	p.open()
	_, err = Listen(p, "", "0", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = Listen(p, "192.0.2.1", "", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = NewConnReq(context.Background(), p, "", "7204", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = NewConnReq(context.Background(), p, "192.0.2.1", "", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	var nilCtx context.Context // a nil context is the point
	_, err = NewConnReq(nilCtx, p, "192.0.2.1", "7204", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	bad := DefaultConnParams()
	bad.CQSize = -1
	_, err = NewConnReq(context.Background(), p, "192.0.2.1", "7204", &bad)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "CQSize -1")
	require.Zero(t, p.Children(), "no child registered on argument errors")

	e := &Endpoint{}
	e.open()
	_, err = e.NextConnReq(context.Background(), &bad)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	// Private data is checked before the request is consumed.
	r := &ConnReq{}
	r.open()
	_, err = r.Connect(make([]byte, MaxConnectPrivateData+1))
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.False(t, r.closed(), "an argument error does not consume the request")
	r = &ConnReq{passive: true}
	r.open()
	_, err = r.Connect(make([]byte, MaxAcceptPrivateData+1))
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.False(t, r.closed())

	// A closed peer refuses children.
	closed := &Peer{}
	closed.open()
	closed.markClosed()
	_, err = Listen(closed, "192.0.2.1", "0", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, err, os.ErrClosed)
}

func TestPeerCloseRefusesWithChildren(t *testing.T) {
	d := &Device{}
	d.open()
	p := &Peer{dev: d}
	p.open()
	d.peers.Add(1)
	require.NoError(t, p.acquire("x"))
	err := p.Close()
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.EBUSY)
	require.Contains(t, err.Error(), "1 object(s)")
	require.False(t, p.closed(), "a refused Close leaves the peer usable")

	err = d.Close()
	require.ErrorIs(t, err, syscall.EBUSY)
	require.Contains(t, err.Error(), "1 peer(s)")

	p.release()
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close is idempotent")
	require.NoError(t, d.Close())
	require.NoError(t, d.Close())
	_, err = NewPeer(d)
	require.ErrorIs(t, err, os.ErrClosed)
}

func TestAckTimeoutExponent(t *testing.T) {
	for _, c := range []struct {
		d time.Duration
		k uint8
	}{
		{time.Nanosecond, 1},
		{MinAckTimeout, 1},
		{MinAckTimeout + 1, 2},
		{67 * time.Millisecond, 14}, // 4.096 µs × 2^14 = 67.1 ms
		{537 * time.Millisecond, 18},
		{536 * time.Millisecond, 17}, // 536.9 ms: rdma_cm's choice on rxe, 6.12
		{MaxAckTimeout, 31},
	} {
		require.Equal(t, c.k, AckTimeoutExponent(c.d), "%v", c.d)
	}
	p := DefaultConnParams()
	for _, bad := range []time.Duration{-time.Millisecond, MaxAckTimeout + 1} {
		p.AckTimeout = bad
		_, err := ResolveParams("conn_cfg", &p)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "%v", bad)
	}
	p.AckTimeout = MaxAckTimeout
	_, err := ResolveParams("conn_cfg", &p)
	require.NoError(t, err)
}
