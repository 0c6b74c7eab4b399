//go:build rpma_fake && linux

package ibv

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The behaviours of the fake that core relies on, checked through the
// package's API: the start of the conformance table of issue 35 item 1
// (the same checks against rxe, in the VM, are still to come).

type fakeSide struct {
	ch  *EventChannel
	id  *CMID
	cc  *CompChannel
	cq  *CQ
	qp  *QP
	pd  *PD
	buf []byte
	mr  *MR
}

func readable(t *testing.T, fd int) bool {
	t.Helper()
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	require.NoError(t, err)
	return n == 1
}

func nextEvent(t *testing.T, ch *EventChannel, want CMEventType) CMEvent {
	t.Helper()
	require.True(t, readable(t, ch.FD()), "the channel's fd is readable with %v pending", want)
	ev, err := ch.GetEvent()
	require.NoError(t, err)
	require.Equal(t, want, ev.Type)
	return ev
}

func (s *fakeSide) queues(t *testing.T, ctx *Context, depth uint32, access int) {
	var err error
	s.pd, err = ctx.AllocPD()
	require.NoError(t, err)
	s.cc, err = ctx.CreateCompChannel()
	require.NoError(t, err)
	s.cq, err = ctx.CreateCQ(16, s.cc, 0)
	require.NoError(t, err)
	_, err = s.id.CreateQP(&QPInitAttr{PD: s.pd, SendCQ: s.cq, RecvCQ: s.cq, MaxSendWR: depth, MaxRecvWR: depth})
	require.NoError(t, err)
	s.qp = s.id.QP(false)
	s.buf = make([]byte, 64)
	s.mr, err = s.pd.RegMR(unsafe.Pointer(&s.buf[0]), len(s.buf), access)
	require.NoError(t, err)
}

// fakeConnect pairs two QPs through the fake rdma_cm.
func fakeConnect(t *testing.T, depth uint32, serverAccess int) (c, s *fakeSide) {
	c, s = &fakeSide{}, &fakeSide{}
	var err error
	s.ch, err = CreateEventChannel()
	require.NoError(t, err)
	listen, err := CreateID(s.ch)
	require.NoError(t, err)
	ai, err := GetAddrInfo("127.0.0.1", "0", true)
	require.NoError(t, err)
	require.NoError(t, listen.BindAddr(ai))
	ai.Free()
	require.NoError(t, listen.Listen(8))
	port := listen.LocalAddr().Port()
	require.NotZero(t, port)

	c.ch, err = CreateEventChannel()
	require.NoError(t, err)
	c.id, err = CreateID(c.ch)
	require.NoError(t, err)
	ai, err = GetAddrInfo("127.0.0.1", itoaPort(port), false)
	require.NoError(t, err)
	require.NoError(t, c.id.ResolveAddr(ai, 1000))
	ai.Free()
	nextEvent(t, c.ch, EventAddrResolved)
	require.NoError(t, c.id.ResolveRoute(1000))
	nextEvent(t, c.ch, EventRouteResolved)
	c.queues(t, c.id.Verbs(), depth, AccessLocalWrite)
	require.NoError(t, c.id.Connect(&ConnParam{PrivateData: []byte("hi")}))
	req := nextEvent(t, s.ch, EventConnectRequest)
	require.True(t, req.ListenID.Same(listen))
	require.Equal(t, []byte("hi"), req.PrivateData)
	s.id = req.ID
	s.queues(t, s.id.Verbs(), depth, serverAccess)
	require.NoError(t, s.id.Accept(&ConnParam{PrivateData: []byte("yo")}))
	require.Equal(t, []byte("yo"), nextEvent(t, c.ch, EventEstablished).PrivateData)
	nextEvent(t, s.ch, EventEstablished)
	require.False(t, readable(t, s.ch.FD()), "nothing pending: not readable")
	t.Cleanup(func() {
		for _, x := range []*fakeSide{c, s} {
			x.id.Destroy()
			x.mr.Dereg()
			x.cq.Destroy()
			x.cc.Destroy()
			x.pd.Dealloc()
			x.ch.Destroy()
		}
		listen.Destroy()
	})
	return c, s
}

func itoaPort(p uint16) string { return itoa(uint32(p)) }

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

func pollAll(t *testing.T, q *CQ) []WC {
	t.Helper()
	b, err := NewWCBuf(16)
	require.NoError(t, err)
	defer b.Free()
	n, err := q.Poll(b, 0, 16)
	require.NoError(t, err)
	return append([]WC(nil), b.Slice()[:n]...)
}

func TestFakeConformance(t *testing.T) {
	SetFakeTiming(FakeNow)
	rw := AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead

	t.Run("write moves bytes; arming gives one event", func(t *testing.T) {
		c, s := fakeConnect(t, 4, rw)
		copy(c.buf, "abcdefgh")
		require.False(t, readable(t, c.cc.FD()), "not armed: no event")
		require.NoError(t, c.cq.ReqNotify(false))
		errno, _ := c.qp.PostSend(1, OpRDMAWrite, SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr+8, s.mr.RKey, 0, Reap{})
		require.Zero(t, errno)
		require.Equal(t, "abcdefgh", string(s.buf[8:16]))
		require.True(t, readable(t, c.cc.FD()))
		ref, err := c.cc.GetCQEventRearm()
		require.NoError(t, err)
		require.True(t, c.cq.Is(ref))
		require.False(t, readable(t, c.cc.FD()))
		_, err = c.cc.GetCQEventRearm()
		require.ErrorIs(t, err, syscall.EAGAIN)
		wcs := pollAll(t, c.cq)
		require.Len(t, wcs, 1)
		require.Equal(t, uint64(1), wcs[0].WRID)
		require.Equal(t, uint32(WCSuccess), wcs[0].Status)
	})

	t.Run("reap polls in the same call", func(t *testing.T) {
		c, s := fakeConnect(t, 4, rw)
		b, err := NewWCBuf(4)
		require.NoError(t, err)
		defer b.Free()
		errno, reaped := c.qp.PostSend(2, OpRDMARead, SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, c.cq.ReapInto(b, 1, 3))
		require.Zero(t, errno)
		require.Equal(t, 1, reaped)
		require.Equal(t, uint64(2), b.Slice()[1].WRID)
	})

	t.Run("depth: ENOMEM beyond it while completions are held", func(t *testing.T) {
		c, s := fakeConnect(t, 2, rw)
		c.qp.SetFakeTiming(FakeLater)
		for i := 0; i < 2; i++ {
			errno, _ := c.qp.PostSend(uint64(i), OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, Reap{})
			require.Zero(t, errno)
		}
		errno, _ := c.qp.PostSend(9, OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, Reap{})
		require.Equal(t, syscall.ENOMEM, errno)
		require.Empty(t, pollAll(t, c.cq))
		require.Equal(t, 2, c.qp.FakeRelease())
		require.Empty(t, pollAll(t, c.cq), "unsignaled: no completion")
	})

	t.Run("remote access error fails both QPs; later posts flush", func(t *testing.T) {
		c, s := fakeConnect(t, 4, AccessLocalWrite|AccessRemoteRead)
		errno, _ := c.qp.PostSend(3, OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, Reap{})
		require.Zero(t, errno)
		wcs := pollAll(t, c.cq)
		require.Len(t, wcs, 1, "an error completes even unsignaled")
		require.Equal(t, uint32(WCRemAccessErr), wcs[0].Status)
		st, err := c.qp.State()
		require.NoError(t, err)
		require.Equal(t, QPStateErr, st)
		st, err = s.qp.State()
		require.NoError(t, err)
		require.Equal(t, QPStateErr, st)
		errno, _ = c.qp.PostSend(4, OpRDMAWrite, SendSignaled, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, Reap{})
		require.Zero(t, errno)
		wcs = pollAll(t, c.cq)
		require.Len(t, wcs, 1)
		require.Equal(t, uint32(WCWRFlushErr), wcs[0].Status)
	})

	t.Run("out of range and bad lkey", func(t *testing.T) {
		c, s := fakeConnect(t, 4, rw)
		errno, _ := c.qp.PostSend(5, OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr+60, s.mr.RKey, 0, Reap{})
		require.Zero(t, errno)
		require.Equal(t, uint32(WCRemAccessErr), pollAll(t, c.cq)[0].Status)
		c2, s2 := fakeConnect(t, 4, rw)
		errno, _ = c2.qp.PostSend(6, OpRDMAWrite, 0, c2.mr.Addr, 8, c2.mr.LKey+256, s2.mr.Addr, s2.mr.RKey, 0, Reap{})
		require.Zero(t, errno)
		require.Equal(t, uint32(WCLocProtErr), pollAll(t, c2.cq)[0].Status)
	})

	t.Run("ToError flushes what is held, in order", func(t *testing.T) {
		c, s := fakeConnect(t, 4, rw)
		c.qp.SetFakeTiming(FakeNever)
		for i := 0; i < 3; i++ {
			errno, _ := c.qp.PostSend(uint64(10+i), OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, Reap{})
			require.Zero(t, errno)
		}
		require.Empty(t, pollAll(t, c.cq))
		require.NoError(t, c.qp.ToError())
		wcs := pollAll(t, c.cq)
		require.Len(t, wcs, 3)
		for i, wc := range wcs {
			require.Equal(t, uint64(10+i), wc.WRID)
			require.Equal(t, uint32(WCWRFlushErr), wc.Status)
		}
	})

	t.Run("send consumes a receive; disconnect reaches both", func(t *testing.T) {
		c, s := fakeConnect(t, 4, rw)
		require.Zero(t, s.qp.PostRecv(7, s.mr.Addr, 64, s.mr.LKey))
		copy(c.buf, "payload")
		errno, _ := c.qp.PostSend(8, OpSendWithImm, SendSignaled, c.mr.Addr, 7, c.mr.LKey, 0, 0, 0x01020304, Reap{})
		require.Zero(t, errno)
		wcs := pollAll(t, s.cq)
		require.Len(t, wcs, 1)
		require.Equal(t, uint64(7), wcs[0].WRID)
		require.Equal(t, uint32(7), wcs[0].ByteLen)
		require.NotZero(t, wcs[0].WCFlags&WCWithImm)
		require.Equal(t, "payload", string(s.buf[:7]))
		require.NoError(t, c.id.Disconnect())
		nextEvent(t, s.ch, EventDisconnected)
		require.NoError(t, s.id.Disconnect(), "the answer")
		nextEvent(t, c.ch, EventDisconnected)
		require.Error(t, c.id.Disconnect(), "a second disconnect")
	})

	t.Run("injection fails the matching call", func(t *testing.T) {
		c, s := fakeConnect(t, 4, rw)
		site := -1
		for i, x := range InjectSites() {
			if x.Name == "POST_SEND" {
				site = i
			}
		}
		InjectReset()
		defer InjectReset()
		InjectArm(site, 2, syscall.EAGAIN)
		for i, want := range []syscall.Errno{0, syscall.EAGAIN, 0} {
			errno, _ := c.qp.PostSend(uint64(i), OpRDMAWrite, 0, c.mr.Addr, 8, c.mr.LKey, s.mr.Addr, s.mr.RKey, 0, Reap{})
			require.Equal(t, want, errno, "post %d", i)
		}
		require.True(t, InjectFired())
		require.Equal(t, int64(3), InjectCounts()[site])
	})
}
