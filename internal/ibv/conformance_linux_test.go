//go:build linux && (cgo || rpma_fake)

package ibv_test

import (
	"encoding/binary"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// The conformance table (issue 35 item 1): behaviours of the verbs and
// rdma_cm calls that internal/core relies on, checked through package
// ibv's API the same way against the fake (the host tier's rpma_fake run)
// and against rxe (the VM tiers), so that the fake cannot drift from the
// provider. Completions and events come at once from the fake and a
// little later from rxe: every check of something that must come waits
// for it (up to confWait); a check that something is absent is made only
// where nothing can still be on its way. The fake's own hooks (held
// completions, injection) are in fake_test.go.

const confWait = 10 * time.Second

type confSide struct {
	ch  *ibv.EventChannel
	id  *ibv.CMID
	cc  *ibv.CompChannel
	cq  *ibv.CQ
	qp  *ibv.QP
	pd  *ibv.PD
	buf []byte // mmap'd: memory the device touches is not Go's
	mr  *ibv.MR
}

// awaitReadable waits up to confWait for fd to be readable.
func awaitReadable(t *testing.T, fd int, what string) {
	t.Helper()
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(confWait); ; {
		n, err := unix.Poll(p, 100)
		if err != syscall.EINTR {
			require.NoError(t, err)
		}
		if n == 1 {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s: not readable within %v", what, confWait)
	}
}

func isReadable(t *testing.T, fd int) bool {
	t.Helper()
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	require.NoError(t, err)
	return n == 1
}

// confEvent waits for ch's next event and checks its type.
func confEvent(t *testing.T, ch *ibv.EventChannel, want ibv.CMEventType) ibv.CMEvent {
	t.Helper()
	awaitReadable(t, ch.FD(), want.String())
	ev, err := ch.GetEvent()
	require.NoError(t, err)
	require.Equal(t, want, ev.Type)
	return ev
}

// confPoll polls q until it has returned n completions (waiting up to
// confWait), and returns them.
func confPoll(t *testing.T, q *ibv.CQ, n int) []ibv.WC {
	t.Helper()
	b, err := ibv.NewWCBuf(16)
	require.NoError(t, err)
	defer b.Free()
	var wcs []ibv.WC
	for deadline := time.Now().Add(confWait); len(wcs) < n; {
		got, err := q.Poll(b, 0, 16)
		require.NoError(t, err)
		wcs = append(wcs, b.Slice()[:got]...)
		if got == 0 {
			require.True(t, time.Now().Before(deadline), "%d of %d completions within %v", len(wcs), n, confWait)
			time.Sleep(time.Millisecond)
		}
	}
	return wcs
}

func (s *confSide) queues(t *testing.T, ctx *ibv.Context, access int) {
	t.Helper()
	var err error
	s.pd, err = ctx.AllocPD()
	require.NoError(t, err)
	s.cc, err = ctx.CreateCompChannel()
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(s.cc.FD(), true), "core's channels are non-blocking")
	s.cq, err = ctx.CreateCQ(16, s.cc, 0)
	require.NoError(t, err)
	_, err = s.id.CreateQP(&ibv.QPInitAttr{PD: s.pd, SendCQ: s.cq, RecvCQ: s.cq, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 8})
	require.NoError(t, err)
	s.qp = s.id.QP(false)
	s.buf, err = unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	s.mr, err = s.pd.RegMR(unsafe.Pointer(&s.buf[0]), 64, access)
	require.NoError(t, err)
}

// confConnect connects a client and a server side through rdma_cm, the
// server's region registered with serverAccess.
func confConnect(t *testing.T, serverAccess int) (c, s *confSide) {
	ip := conformanceIP(t)
	c, s = &confSide{}, &confSide{}
	var err error
	listenCh, err := ibv.CreateEventChannel()
	require.NoError(t, err)
	listen, err := ibv.CreateID(listenCh)
	require.NoError(t, err)
	ai, err := ibv.GetAddrInfo(ip, "0", true)
	require.NoError(t, err)
	require.NoError(t, listen.BindAddr(ai))
	ai.Free()
	require.NoError(t, listen.Listen(8))
	port := listen.LocalAddr().Port()
	require.NotZero(t, port)

	c.ch, err = ibv.CreateEventChannel()
	require.NoError(t, err)
	c.id, err = ibv.CreateID(c.ch)
	require.NoError(t, err)
	ai, err = ibv.GetAddrInfo(ip, itoa(uint32(port)), false)
	require.NoError(t, err)
	require.NoError(t, c.id.ResolveAddr(ai, 1000))
	ai.Free()
	confEvent(t, c.ch, ibv.EventAddrResolved)
	require.NoError(t, c.id.ResolveRoute(1000))
	confEvent(t, c.ch, ibv.EventRouteResolved)
	c.queues(t, c.id.Verbs(), ibv.AccessLocalWrite)
	require.NoError(t, c.id.Connect(&ibv.ConnParam{PrivateData: []byte("hi"), ResponderResources: 1, InitiatorDepth: 1}))
	req := confEvent(t, listenCh, ibv.EventConnectRequest)
	require.True(t, req.ListenID.Same(listen))
	require.GreaterOrEqual(t, len(req.PrivateData), 2)
	require.Equal(t, "hi", string(req.PrivateData[:2]), "private data (IB pads it to 56 bytes)")
	s.id = req.ID
	// As core does (newPassive): the request's id moves to its own
	// channel, so that its events never reach the listening id's.
	s.ch, err = ibv.CreateEventChannel()
	require.NoError(t, err)
	require.NoError(t, s.id.Migrate(s.ch))
	s.queues(t, s.id.Verbs(), serverAccess)
	require.NoError(t, s.id.Accept(&ibv.ConnParam{PrivateData: []byte("yo"), ResponderResources: 1, InitiatorDepth: 1}))
	est := confEvent(t, c.ch, ibv.EventEstablished)
	require.GreaterOrEqual(t, len(est.PrivateData), 2)
	require.Equal(t, "yo", string(est.PrivateData[:2]))
	confEvent(t, s.ch, ibv.EventEstablished)
	t.Cleanup(func() {
		for _, x := range []*confSide{c, s} {
			x.id.DestroyQP()
			require.NoError(t, x.id.Destroy())
			require.NoError(t, x.mr.Dereg())
			require.NoError(t, x.cq.Destroy())
			require.NoError(t, x.cc.Destroy())
			require.NoError(t, x.pd.Dealloc())
			require.NoError(t, unix.Munmap(x.buf))
		}
		// Each id before the channel it is on: rdma_destroy_id fails on
		// an id whose channel is gone.
		require.NoError(t, listen.Destroy())
		listenCh.Destroy()
		c.ch.Destroy()
		s.ch.Destroy()
	})
	return c, s
}

func itoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

func TestIntegrationConformance(t *testing.T) {
	rw := ibv.AccessLocalWrite | ibv.AccessRemoteWrite | ibv.AccessRemoteRead

	t.Run("a write moves bytes; an armed CQ's event is read once and re-arms", func(t *testing.T) {
		c, s := confConnect(t, rw)
		copy(c.buf, "abcdefgh")
		require.False(t, isReadable(t, c.cc.FD()), "nothing posted: no event")
		require.NoError(t, c.cq.ReqNotify(false))
		errno, _ := c.qp.PostSend(1, ibv.OpRDMAWrite, ibv.SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr+8, s.mr.RKey, 0, ibv.Reap{})
		require.Zero(t, errno)
		awaitReadable(t, c.cc.FD(), "the completion channel")
		ref, err := c.cc.GetCQEventRearm()
		require.NoError(t, err)
		require.True(t, c.cq.Is(ref))
		_, err = c.cc.GetCQEventRearm()
		require.ErrorIs(t, err, syscall.EAGAIN, "one completion, one event")
		wcs := confPoll(t, c.cq, 1)
		require.Equal(t, uint64(1), wcs[0].WRID)
		require.Equal(t, uint32(rpma.WCSuccess), wcs[0].Status)
		require.Equal(t, "abcdefgh", string(s.buf[8:16]))
	})

	t.Run("a read brings the remote bytes", func(t *testing.T) {
		c, s := confConnect(t, rw)
		copy(s.buf[16:], "remote!!")
		errno, _ := c.qp.PostSend(2, ibv.OpRDMARead, ibv.SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr+16, s.mr.RKey, 0, ibv.Reap{})
		require.Zero(t, errno)
		wcs := confPoll(t, c.cq, 1)
		require.Equal(t, uint64(2), wcs[0].WRID)
		require.Equal(t, uint32(rpma.WCSuccess), wcs[0].Status)
		require.Equal(t, "remote!!", string(c.buf[:8]))
		// The completion is polled: nothing more is on its way.
		require.False(t, isReadable(t, c.cc.FD()), "a CQ never armed gives no event")
	})

	t.Run("a remote access error completes even unsignaled; receives and later posts flush", func(t *testing.T) {
		c, s := confConnect(t, ibv.AccessLocalWrite|ibv.AccessRemoteRead)
		require.Zero(t, c.qp.PostRecv(9, c.mr.Addr+32, 32, c.mr.LKey))
		errno, _ := c.qp.PostSend(3, ibv.OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, ibv.Reap{})
		require.Zero(t, errno)
		// The failed write and the posted receive, which the QP's error
		// flushes (core's broken connection relies on both).
		status := map[uint64]uint32{}
		for _, wc := range confPoll(t, c.cq, 2) {
			status[wc.WRID] = wc.Status
		}
		require.Equal(t, map[uint64]uint32{3: uint32(rpma.WCRemAccessErr), 9: uint32(rpma.WCWRFlushErr)}, status)
		st, err := c.qp.State()
		require.NoError(t, err)
		require.Equal(t, ibv.QPStateErr, st)
		errno, _ = c.qp.PostSend(4, ibv.OpRDMAWrite, ibv.SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, ibv.Reap{})
		require.Zero(t, errno, "a post to a QP in error is accepted")
		wcs := confPoll(t, c.cq, 1)
		require.Equal(t, uint64(4), wcs[0].WRID)
		require.Equal(t, uint32(rpma.WCWRFlushErr), wcs[0].Status)
	})

	t.Run("a send consumes a posted receive, with its immediate data", func(t *testing.T) {
		c, s := confConnect(t, rw)
		require.Zero(t, s.qp.PostRecv(7, s.mr.Addr, 64, s.mr.LKey))
		copy(c.buf, "payload")
		errno, _ := c.qp.PostSend(8, ibv.OpSendWithImm, ibv.SendSignaled, c.mr.Addr, 7, c.mr.LKey, 0, 0, 0x01020304, ibv.Reap{})
		require.Zero(t, errno)
		wcs := confPoll(t, s.cq, 1)
		require.Equal(t, uint64(7), wcs[0].WRID)
		require.Equal(t, uint32(rpma.WCSuccess), wcs[0].Status)
		require.Equal(t, uint32(7), wcs[0].ByteLen)
		require.NotZero(t, wcs[0].WCFlags&ibv.WCWithImm)
		require.Equal(t, "payload", string(s.buf[:7]))
		require.Equal(t, uint64(8), confPoll(t, c.cq, 1)[0].WRID)
	})

	t.Run("a write with immediate data lands and consumes a receive, which says so", func(t *testing.T) {
		c, s := confConnect(t, rw)
		require.Zero(t, s.qp.PostRecv(11, 0, 0, 0), "a receive without a buffer, as core posts for immediate data")
		copy(c.buf, "imm-data")
		errno, _ := c.qp.PostSend(12, ibv.OpRDMAWriteWithImm, ibv.SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr+24, s.mr.RKey, 0x0a0b0c0d, ibv.Reap{})
		require.Zero(t, errno)
		wc := confPoll(t, s.cq, 1)[0]
		require.Equal(t, uint64(11), wc.WRID)
		require.Equal(t, uint32(rpma.WCSuccess), wc.Status)
		require.Equal(t, uint32(rpma.WCRecvRDMAWithImm), wc.Opcode)
		require.NotZero(t, wc.WCFlags&ibv.WCWithImm)
		// PostSend takes the immediate data in host order; the completion
		// keeps it as verbs stores it, in network order (core's fixImm
		// turns it back).
		var imm [4]byte
		binary.NativeEndian.PutUint32(imm[:], wc.ImmData)
		require.Equal(t, uint32(0x0a0b0c0d), binary.BigEndian.Uint32(imm[:]), "the immediate data, in network order")
		require.Equal(t, uint32(8), wc.ByteLen, "the write's length")
		require.Equal(t, "imm-data", string(s.buf[24:32]))
		require.Equal(t, uint64(12), confPoll(t, c.cq, 1)[0].WRID)
	})

	t.Run("compare-and-swap and fetch-and-add change the remote word and bring its old value", func(t *testing.T) {
		c, s := confConnect(t, rw|ibv.AccessRemoteAtomic)
		binary.LittleEndian.PutUint64(s.buf[40:], 5)
		errno, _ := c.qp.PostAtomic(13, ibv.OpAtomicCmpAndSwp, ibv.SendSignaled, c.mr.Addr+48, c.mr.LKey, s.mr.Addr+40, s.mr.RKey, 5, 9, ibv.Reap{})
		require.Zero(t, errno)
		wc := confPoll(t, c.cq, 1)[0]
		require.Equal(t, uint32(rpma.WCSuccess), wc.Status)
		require.Equal(t, uint32(rpma.WCCompSwap), wc.Opcode)
		require.Equal(t, uint64(5), binary.LittleEndian.Uint64(c.buf[48:]), "the old value")
		require.Equal(t, uint64(9), binary.LittleEndian.Uint64(s.buf[40:]), "swapped: it was the compare value")
		errno, _ = c.qp.PostAtomic(14, ibv.OpAtomicFetchAdd, ibv.SendSignaled, c.mr.Addr+48, c.mr.LKey, s.mr.Addr+40, s.mr.RKey, 3, 0, ibv.Reap{})
		require.Zero(t, errno)
		wc = confPoll(t, c.cq, 1)[0]
		require.Equal(t, uint32(rpma.WCSuccess), wc.Status)
		require.Equal(t, uint32(rpma.WCFetchAdd), wc.Opcode)
		require.Equal(t, uint64(9), binary.LittleEndian.Uint64(c.buf[48:]), "the old value")
		require.Equal(t, uint64(12), binary.LittleEndian.Uint64(s.buf[40:]), "added")
	})

	// In IB's CM the side that disconnects first sends a DREQ, and the
	// other side's DREP goes out only when that side calls
	// rdma_disconnect too (or when the DREQ times out, after seconds):
	// the first side's DISCONNECTED waits for the second's call, as
	// core's close (conn.go, Disconnect) assumes.
	t.Run("a disconnect reaches the other side, whose disconnect ends the first's", func(t *testing.T) {
		c, s := confConnect(t, rw)
		require.NoError(t, c.id.Disconnect())
		confEvent(t, s.ch, ibv.EventDisconnected)
		// Nothing is on its way to the first side: its DREQ times out
		// only after seconds (rdma_cm's CM response timeout).
		require.False(t, isReadable(t, c.ch.FD()), "DISCONNECTED before the other side answered")
		require.NoError(t, s.id.Disconnect())
		confEvent(t, c.ch, ibv.EventDisconnected)
	})
}
