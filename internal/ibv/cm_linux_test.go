//go:build linux && cgo && !rpma_fake

package ibv_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rdmatest"
)

func TestIntegrationEventChannel(t *testing.T) {
	rdmatest.SkipIfNoRDMA(t)
	ch, err := ibv.CreateEventChannel()
	require.NoError(t, err)
	defer ch.Destroy()
	require.GreaterOrEqual(t, ch.FD(), 0)

	require.NoError(t, unix.SetNonblock(ch.FD(), true))
	_, err = ch.GetEvent()
	require.True(t, errors.Is(err, syscall.EAGAIN), "no event on a non-blocking channel: %v", err)

	ch.Destroy()
	require.Equal(t, -1, ch.FD())
	ch.Destroy() // no-op
}

func TestIntegrationCMIDListen(t *testing.T) {
	ip := rdmatest.IP(t)
	ch, err := ibv.CreateEventChannel()
	require.NoError(t, err)
	defer ch.Destroy()
	id, err := ibv.CreateID(ch)
	require.NoError(t, err)
	ai, err := ibv.GetAddrInfo(ip, "0", true)
	require.NoError(t, err)
	require.NoError(t, id.BindAddr(ai))
	ai.Free()
	ai.Free() // no-op
	require.NoError(t, id.Listen(0))
	la := id.LocalAddr()
	require.Equal(t, ip, la.Addr().String())
	require.NotZero(t, la.Port())
	require.False(t, id.HasQP())
	require.Zero(t, id.QPNum())
	v := id.Verbs()
	require.NotNil(t, v)
	require.Equal(t, "rxe0", v.Name())
	require.NoError(t, id.Destroy())

	_, err = ibv.GetAddrInfo("no-such-host.invalid", "", false)
	var ae *ibv.AddrInfoError
	require.ErrorAs(t, err, &ae)
}

func TestIntegrationVerbsObjects(t *testing.T) {
	ip := rdmatest.IP(t)
	ai, err := ibv.GetAddrInfo(ip, "", true)
	require.NoError(t, err)
	defer ai.Free()
	id, err := ibv.CreateID(nil)
	require.NoError(t, err)
	defer id.Destroy()
	require.NoError(t, id.BindAddr(ai))
	ctx := id.Verbs()
	require.True(t, ctx.Same(id.Verbs()))

	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	require.True(t, pd.Context().Same(ctx))

	ch, err := ctx.CreateCompChannel()
	require.NoError(t, err)
	require.GreaterOrEqual(t, ch.FD(), 0)
	cq, err := ctx.CreateCQ(10, ch, 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, cq.CQE(), 10)
	require.NoError(t, cq.ReqNotify(false))

	wc, err := ibv.NewWCBuf(4)
	require.NoError(t, err)
	defer wc.Free()
	require.Len(t, wc.Slice(), 4)
	n, err := cq.Poll(wc, 0, 4)
	require.NoError(t, err)
	require.Zero(t, n, "an empty CQ")
	n, err = cq.Poll(wc, 0, 0)
	require.NoError(t, err)
	require.Zero(t, n)

	require.NoError(t, unix.SetNonblock(ch.FD(), true))
	_, err = ch.GetCQEventRearm()
	require.True(t, errors.Is(err, syscall.EAGAIN), "%v", err)

	require.NoError(t, cq.Destroy())
	require.NoError(t, cq.Destroy(), "no-op")
	require.NoError(t, ch.Destroy())
	require.NoError(t, ch.Destroy())
	require.Equal(t, -1, ch.FD())
	require.NoError(t, pd.Dealloc())
	require.NoError(t, pd.Dealloc())
}

func TestIntegrationCreateQP(t *testing.T) {
	ip := rdmatest.IP(t)
	ai, err := ibv.GetAddrInfo(ip, "", true)
	require.NoError(t, err)
	defer ai.Free()
	id, err := ibv.CreateID(nil)
	require.NoError(t, err)
	defer id.Destroy()
	require.NoError(t, id.BindAddr(ai))
	ctx := id.Verbs()
	attr, err := ctx.QueryDevice()
	require.NoError(t, err)
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer pd.Dealloc()
	cq, err := ctx.CreateCQ(10, nil, 0)
	require.NoError(t, err)
	defer cq.Destroy()

	a := ibv.QPInitAttr{
		PD: pd, SendCQ: cq, RecvCQ: cq,
		MaxSendWR: 10, MaxRecvWR: 10, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 8,
	}
	if attr.NativeAtomicWrite() {
		a.SendOpsFlags = ibv.QPExWithAtomicWrite
	}
	caps, err := id.CreateQP(&a)
	require.NoError(t, err, "send_ops_flags %#x", a.SendOpsFlags)
	t.Logf("QP caps %+v (send_ops_flags %#x)", caps, a.SendOpsFlags)
	require.GreaterOrEqual(t, caps.MaxSendWR, uint32(10))
	require.GreaterOrEqual(t, caps.MaxRecvWR, uint32(10))
	require.GreaterOrEqual(t, caps.MaxInlineData, uint32(8))
	require.True(t, id.HasQP())
	require.NotZero(t, id.QPNum())
	id.DestroyQP()
	require.False(t, id.HasQP())
	id.DestroyQP() // no-op
}
