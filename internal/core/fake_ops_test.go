//go:build rpma_fake && linux

package core

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// Every operation, in each of its three forms (post and GetWC, the
// waiting call, the asynchronous post and Pending.Wait), completes on a
// healthy connection and does what it says.
func TestFakeEveryOperation(t *testing.T) {
	p := fakePeer(t)
	prm := DefaultConnParams()
	prm.RCQSize = 16
	client, server := fakePair(t, p, &prm)
	local, err := RegMR(p, make([]byte, 4096), UsageWriteSrc|UsageReadDst|UsageSend|UsageRecv)
	require.NoError(t, err)
	defer local.Close()
	rmr, err := RegMR(p, make([]byte, 4096), UsageWriteDst|UsageReadSrc|UsageFlushVisibility|UsageFlushPersistent|UsageAtomicDst|UsageRecv|UsageSend)
	require.NoError(t, err)
	defer rmr.Close()
	d := rmr.ExtendedDescriptor()
	remote, err := RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)
	require.NoError(t, client.ApplyRemotePeerCfg(true)) // persistent flushes
	ctx := fakeCtx(t)
	one := func(t *testing.T, q *CQ) {
		wc := fakeWaitOne(t, q)
		require.NoError(t, wc.Err())
	}
	recvs := func(k int) {
		for i := 0; i < k; i++ {
			require.NoError(t, server.Recv(rmr, 2048+i*64, 64, uint64(100+i)))
		}
	}
	drainRecv := func(k int) {
		for i := 0; i < k; i++ {
			one(t, server.RCQ())
		}
	}

	t.Run("post", func(t *testing.T) {
		a := rpma.CompletionAlways
		require.NoError(t, client.Write(remote, 0, local, 0, 16, a, 1))
		one(t, client.CQ())
		require.NoError(t, client.Read(local, 0, remote, 0, 16, a, 2))
		one(t, client.CQ())
		require.NoError(t, client.Flush(remote, 0, 16, rpma.FlushPersistent, a, 3))
		one(t, client.CQ())
		require.NoError(t, client.WriteAndFlush(remote, 0, local, 0, 16, rpma.FlushVisibility, a, 4))
		one(t, client.CQ())
		require.NoError(t, client.AtomicWrite(remote, 64, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}, a, 5))
		one(t, client.CQ())
		require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, rmr.Bytes()[64:72])
		require.NoError(t, client.CompareAndSwap(remote, 128, local, 256, 0, 42, a, 6))
		one(t, client.CQ())
		require.NoError(t, client.FetchAndAdd(remote, 128, local, 256, 1, a, 7))
		one(t, client.CQ())
		require.Equal(t, uint64(42), binary.NativeEndian.Uint64(local.Bytes()[256:]))
		recvs(3)
		require.NoError(t, client.Send(local, 0, 8, a, 8))
		one(t, client.CQ())
		require.NoError(t, client.SendWithImm(local, 0, 8, a, 0xabcd, 9))
		one(t, client.CQ())
		require.NoError(t, client.WriteWithImm(remote, 0, local, 0, 8, a, 0x1234, 10))
		one(t, client.CQ())
		var imms []uint32
		for i := 0; i < 3; i++ {
			wc := fakeWaitOne(t, server.RCQ())
			require.NoError(t, wc.Err())
			if wc.Flags&(1<<1) != 0 { // IBV_WC_WITH_IMM
				imms = append(imms, wc.Imm)
			}
		}
		require.Len(t, imms, 2)
		// Unsignaled: no completion of the library's own.
		require.NoError(t, client.Write(remote, 0, local, 0, 16, rpma.CompletionOnError, 11))
		var wc [1]WC
		n, _ := client.CQ().GetWC(wc[:])
		require.Zero(t, n)
	})

	t.Run("wait", func(t *testing.T) {
		recvs(3) // for the write with immediate and the two sends
		require.NoError(t, client.WriteWait(ctx, remote, 0, local, 0, 16))
		require.NoError(t, client.WriteWithImmWait(ctx, remote, 0, local, 0, 16, 5))
		require.NoError(t, client.ReadWait(ctx, local, 0, remote, 0, 16))
		require.NoError(t, client.FlushWait(ctx, remote, 0, 16, rpma.FlushVisibility))
		require.NoError(t, client.WriteAndFlushWait(ctx, remote, 0, local, 0, 16, rpma.FlushPersistent))
		require.NoError(t, client.AtomicWriteWait(ctx, remote, 64, [8]byte{9}))
		old, err := client.CompareAndSwapWait(ctx, remote, 128, local, 256, 43, 44)
		require.NoError(t, err)
		require.Equal(t, uint64(43), old)
		require.NoError(t, client.SendWait(ctx, local, 0, 8))
		require.NoError(t, client.SendWithImmWait(ctx, local, 0, 8, 7))
		drainRecv(3)
		require.NoError(t, server.Recv(rmr, 2048, 64, 202))
		got := make(chan error, 1)
		go func() {
			wc, err := server.RecvWait(ctx, rmr, 2112, 64)
			if err == nil {
				err = wc.Err()
			}
			got <- err
		}()
		require.NoError(t, client.SendWait(ctx, local, 0, 8))
		require.NoError(t, client.SendWait(ctx, local, 0, 8))
		require.NoError(t, <-got)
		one(t, server.RCQ())
	})

	t.Run("async", func(t *testing.T) {
		var ps []Pending
		add := func(p Pending, err error) {
			t.Helper()
			require.NoError(t, err)
			ps = append(ps, p)
		}
		add(client.WriteAsync(ctx, remote, 0, local, 0, 16))
		add(client.ReadAsync(ctx, local, 0, remote, 0, 16))
		add(client.FlushAsync(ctx, remote, 0, 16, rpma.FlushVisibility))
		add(client.WriteAndFlushAsync(ctx, remote, 0, local, 0, 16, rpma.FlushVisibility))
		add(client.AtomicWriteAsync(ctx, remote, 64, [8]byte{3}))
		add(client.CompareAndSwapAsync(ctx, remote, 128, local, 256, 0, 1))
		add(client.FetchAndAddAsync(ctx, remote, 128, local, 256, 1))
		require.NoError(t, server.Recv(rmr, 2048, 64, 300))
		add(client.SendAsync(ctx, local, 0, 8))
		rp, err := server.RecvAsync(ctx, rmr, 2112, 64)
		require.NoError(t, err)
		add(client.SendAsync(ctx, local, 0, 8))
		for _, p := range ps {
			_, err := p.Wait(ctx)
			require.NoError(t, err)
		}
		_, err = rp.Wait(ctx)
		require.NoError(t, err)
		one(t, server.RCQ())
		_, err = ps[0].Wait(ctx)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "a second wait")
		_, err = Pending{}.Wait(ctx)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	})

	t.Run("getcomp", func(t *testing.T) {
		require.NoError(t, client.Write(remote, 0, local, 0, 16, rpma.CompletionAlways, 77))
		wc, err := client.GetComp(ctx, false)
		require.NoError(t, err)
		require.Equal(t, uint64(77), wc.OpContext)
	})

	t.Run("context", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, client.WriteWait(c, remote, 0, local, 0, 16), context.Canceled)
	})
}

// Arguments the library refuses before posting: nothing reaches the
// provider and the connection stays healthy.
func TestFakeArgumentChecks(t *testing.T) {
	p := fakePeer(t)
	client, _ := fakePair(t, p, nil)
	src, _, remote := fakeRegions(t, p, 64)
	a := rpma.CompletionAlways
	ctx := fakeCtx(t)
	for name, err := range map[string]error{
		"write past the remote end": client.Write(remote, 60, src, 0, 8, a, 1),
		"write past the local end":  client.Write(remote, 0, src, 60, 8, a, 1),
		"negative length":           client.Write(remote, 0, src, 0, -1, a, 1),
		"nil local":                 client.Write(remote, 0, nil, 0, 8, a, 1),
		"nil remote":                client.Write(nil, 0, src, 0, 8, a, 1),
		"unaligned atomic":          client.AtomicWrite(remote, 3, [8]byte{}, a, 1),
		"atomic without usage":      client.CompareAndSwap(remote, 0, src, 0, 0, 1, a, 1),
		"flush past the end":        client.Flush(remote, 60, 8, rpma.FlushVisibility, a, 1),
		"persistent flush":          client.Flush(remote, 0, 8, rpma.FlushPersistent, a, 1),
		"send from a write source":  client.Send(src, 0, 8, a, 1),
		"recv into a write source":  client.Recv(src, 0, 8, 1),
		"wait past the end":         client.WriteWait(ctx, remote, 60, src, 0, 8),
		"bad flags":                 client.Write(remote, 0, src, 0, 8, rpma.CompletionFlags(99), 1),
	} {
		require.Error(t, err, name)
		require.NotErrorIs(t, err, rpma.ErrConnBroken, name)
	}
	require.NoError(t, client.Broken())
	require.NoError(t, client.WriteWait(ctx, remote, 0, src, 0, 8))
}

// The device list names the fake device; a device found by address
// reports its attributes.
func TestFakeDevices(t *testing.T) {
	infos, err := ListDevices()
	require.NoError(t, err)
	require.Len(t, infos, 1)
	dev, err := LookupDevice(fakeCtx(t), fakeIP, false)
	require.NoError(t, err)
	odp, err := dev.ODPCapable()
	require.NoError(t, err)
	require.False(t, odp)
	require.NoError(t, dev.Close())
	_, err = DeviceForAddress("not an address", rpma.IbvContextRemote)
	require.Error(t, err)
}
