//go:build linux && cgo

package conn_test

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationWriteFlushRead writes into the server's memory, flushes
// it to visibility, reads it back, and checks the bytes at each step.
func TestIntegrationWriteFlushRead(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)

	dst, dstMem := region(t, p, 4096, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushVisibility)
	src, srcMem := region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
	rdst := remoteOf(t, dst)

	msg := []byte("written by the client, flushed, read back")
	copy(srcMem[100:], msg)
	require.NoError(t, client.Write(rdst, 200, src, 100, len(msg), rpma.CompletionOnError, 1))
	require.NoError(t, client.Flush(rdst, 200, len(msg), rpma.FlushVisibility, rpma.CompletionAlways, 2))
	wc := okWC(t, ctx, client.CQ(), flushOp(client), 2)
	t.Logf("flush completion: %+v", wc)
	require.Equal(t, msg, dstMem[200:200+len(msg)], "the bytes arrived")

	// Read them back into another place of the client's memory.
	require.NoError(t, client.Read(src, 1000, rdst, 200, len(msg), rpma.CompletionAlways, 3))
	okWC(t, ctx, client.CQ(), rpma.WCRDMARead, 3)
	require.Equal(t, msg, srcMem[1000:1000+len(msg)])

	// The chained write and flush.
	msg2 := bytes.Repeat([]byte{0xA5}, 512)
	copy(srcMem[2048:], msg2)
	require.NoError(t, client.WriteAndFlush(rdst, 3000, src, 2048, len(msg2), rpma.FlushVisibility, rpma.CompletionAlways, 4))
	okWC(t, ctx, client.CQ(), flushOp(client), 4)
	require.Equal(t, msg2, dstMem[3000:3000+len(msg2)])
}

// TestIntegrationMessages: send, send with immediate data, a receive
// posted on the request before connecting, and write with immediate data.
func TestIntegrationMessages(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	srvBuf, srvMem := region(t, p, 4096, mr.UsageRecv|mr.UsageWriteDst)
	cliBuf, cliMem := region(t, p, 4096, mr.UsageSend|mr.UsageWriteSrc)

	// The first receive is posted on the request, before the connection
	// exists.
	client, server := pairCfg(t, p, e, ip, nil, nil, func(r *conn.ConnReq) error {
		return r.Recv(srvBuf, 0, 256, 100)
	})

	msg := []byte("hello through a receive posted before connecting")
	copy(cliMem, msg)
	require.NoError(t, client.Send(cliBuf, 0, len(msg), rpma.CompletionAlways, 1))
	okWC(t, ctx, client.CQ(), rpma.WCSend, 1)
	wc := okWC(t, ctx, server.CQ(), rpma.WCRecv, 100)
	require.Equal(t, uint32(len(msg)), wc.ByteLen)
	require.Zero(t, wc.Flags&cq.WithImm)
	require.Equal(t, msg, srvMem[:len(msg)])

	// Send with immediate data: host order in, host order out.
	require.NoError(t, server.Recv(srvBuf, 256, 256, 101))
	msg2 := []byte("with imm")
	copy(cliMem[256:], msg2)
	require.NoError(t, client.SendWithImm(cliBuf, 256, len(msg2), rpma.CompletionOnError, 0xDEADBEEF, 2))
	wc = okWC(t, ctx, server.CQ(), rpma.WCRecv, 101)
	require.NotZero(t, wc.Flags&cq.WithImm)
	require.Equal(t, uint32(0xDEADBEEF), wc.Imm)
	require.Equal(t, msg2, srvMem[256:256+len(msg2)])

	// Write with immediate data consumes a receive (a 0-byte one here);
	// the data lands in the written region.
	require.NoError(t, server.Recv(nil, 0, 0, 102))
	msg3 := []byte("written with an immediate value")
	copy(cliMem[512:], msg3)
	rdst := remoteOf(t, srvBuf)
	require.NoError(t, client.WriteWithImm(rdst, 1024, cliBuf, 512, len(msg3), rpma.CompletionAlways, 0x01020304, 3))
	okWC(t, ctx, client.CQ(), rpma.WCRDMAWrite, 3)
	wc = okWC(t, ctx, server.CQ(), rpma.WCRecvRDMAWithImm, 102)
	require.NotZero(t, wc.Flags&cq.WithImm)
	require.Equal(t, uint32(0x01020304), wc.Imm)
	require.Equal(t, msg3, srvMem[1024:1024+len(msg3)])
}

// TestIntegrationAtomicWrite: native on kernels with rxe atomic write
// (6.2+), emulated below; the 8 bytes arrive either way, after the data
// they publish ("write data, flush, atomic-write the pointer, flush").
func TestIntegrationAtomicWrite(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)
	native := nativeAtomicWriteExpected(t)
	require.Equal(t, native, client.NativeAtomicWrite(), "kernel %s", rdmatest.Kernel())
	require.Equal(t, native, p.NativeAtomicWrite())
	t.Logf("kernel %q: native atomic write %v", rdmatest.Kernel(), native)

	dst, dstMem := region(t, p, 4096, mr.UsageWriteDst|mr.UsageFlushVisibility)
	src, srcMem := region(t, p, 4096, mr.UsageWriteSrc)
	rdst := remoteOf(t, dst)
	data := []byte("the log entry the pointer publishes")
	copy(srcMem[64:], data)
	require.NoError(t, client.Write(rdst, 64, src, 64, len(data), rpma.CompletionOnError, 1))
	require.NoError(t, client.Flush(rdst, 64, len(data), rpma.FlushVisibility, rpma.CompletionOnError, 2))
	ptr := [8]byte{64, 0, 0, 0, 0, 0, 0, byte(len(data))}
	require.NoError(t, client.AtomicWrite(rdst, 8, ptr, rpma.CompletionAlways, 3))
	op := rpma.WCRDMAWrite
	if native {
		op = rpma.WCAtomicWrite
	}
	okWC(t, ctx, client.CQ(), op, 3)
	require.Equal(t, ptr[:], dstMem[8:16])
	require.Equal(t, data, dstMem[64:64+len(data)])
	require.NoError(t, client.Flush(rdst, 8, 8, rpma.FlushVisibility, rpma.CompletionAlways, 4))
	okWC(t, ctx, client.CQ(), flushOp(client), 4)

	// Overwrite with other bytes: all 8 change at once.
	ptr2 := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	require.NoError(t, client.AtomicWrite(rdst, 8, ptr2, rpma.CompletionAlways, 5))
	okWC(t, ctx, client.CQ(), op, 5)
	require.Equal(t, ptr2[:], dstMem[8:16])
}

// TestIntegrationZeroLength: librpma's 0-byte operations (no regions,
// offsets and lengths 0) complete.
func TestIntegrationZeroLength(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, server := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)
	q := client.CQ()

	require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1))
	okWC(t, ctx, q, rpma.WCRDMAWrite, 1)
	require.NoError(t, client.Read(nil, 0, nil, 0, 0, rpma.CompletionAlways, 2))
	okWC(t, ctx, q, rpma.WCRDMARead, 2)
	require.NoError(t, server.Recv(nil, 0, 0, 30))
	require.NoError(t, client.Send(nil, 0, 0, rpma.CompletionAlways, 3))
	okWC(t, ctx, q, rpma.WCSend, 3)
	wc := okWC(t, ctx, server.CQ(), rpma.WCRecv, 30)
	require.Zero(t, wc.ByteLen)

	// With regions: a 0-byte write and a flush of 0 bytes (the emulated
	// flush still reads 8 bytes).
	dst, _ := region(t, p, 64, mr.UsageWriteDst|mr.UsageFlushVisibility)
	src, _ := region(t, p, 64, mr.UsageWriteSrc)
	rdst := remoteOf(t, dst)
	require.NoError(t, client.Write(rdst, 64, src, 64, 0, rpma.CompletionAlways, 4))
	okWC(t, ctx, q, rpma.WCRDMAWrite, 4)
	require.NoError(t, client.Flush(rdst, 0, 0, rpma.FlushVisibility, rpma.CompletionAlways, 5))
	okWC(t, ctx, q, flushOp(client), 5)
	require.NoError(t, client.Broken())
}

// TestIntegrationFlushMatrix: type × applied peer configuration × remote
// usage gives librpma's results: PERSISTENT needs direct write to PMem
// and FLUSH_TYPE_PERSISTENT; VISIBILITY needs FLUSH_TYPE_VISIBILITY;
// everything else is RPMA_E_NOSUPP, and nothing is posted.
func TestIntegrationFlushMatrix(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)

	usages := []mr.Usage{0, mr.UsageFlushVisibility, mr.UsageFlushPersistent, mr.UsageFlushVisibility | mr.UsageFlushPersistent}
	// With native flush a persistent-flush usage asks the device for
	// IBV_ACCESS_FLUSH_PERSISTENT, which rxe grants only on persistent
	// memory: DRAM is refused, so those targets are Device DAX.
	target := func(u mr.Usage) *mr.Local {
		if !client.NativeFlush() || u&mr.UsageFlushPersistent == 0 {
			m, _ := region(t, p, 4096, mr.UsageWriteDst|u)
			return m
		}
		_, err := mr.Reg(p, make([]byte, 4096), mr.UsageWriteDst|u)
		require.ErrorIs(t, err, rpma.ErrProvider, "rxe registers DRAM for a native persistent flush")
		require.ErrorIs(t, err, syscall.EINVAL)
		m, _ := fixture.DAXRegion(t, p, 4096, mr.UsageWriteDst|u)
		return m
	}
	id := uint64(0)
	for _, dw := range []bool{false, true} {
		require.NoError(t, client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: dw}))
		for _, u := range usages {
			m := target(u)
			r := remoteOf(t, m)
			require.Equal(t, u, r.FlushUsage())
			for _, typ := range []rpma.FlushType{rpma.FlushPersistent, rpma.FlushVisibility} {
				id++
				want := false
				switch typ {
				case rpma.FlushPersistent:
					want = dw && u&mr.UsageFlushPersistent != 0
				case rpma.FlushVisibility:
					want = u&mr.UsageFlushVisibility != 0
				}
				err := client.Flush(r, 0, 64, typ, rpma.CompletionAlways, id)
				name := fmt.Sprintf("%v dw2pmem=%v usage=%#x", typ, dw, int(u))
				if !want {
					require.ErrorIs(t, err, rpma.ErrNotSupported, name)
					code, _ := rpma.CodeOf(err)
					require.Equal(t, rpma.CodeNoSupp, code, name)
					continue
				}
				require.NoError(t, err, name)
				okWC(t, ctx, client.CQ(), flushOp(client), id)
				t.Logf("%s: allowed", name)
			}
		}
	}
	var q [1]cq.WC
	_, err := client.CQ().GetWC(q[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "refused flushes posted nothing")
}

// TestIntegrationArgumentChecks: misalignment and out-of-bounds ranges are
// invalid arguments before anything is posted (never a remote access
// error), and leave the connection working.
func TestIntegrationArgumentChecks(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)
	dst, _ := region(t, p, 4096, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushVisibility)
	src, _ := region(t, p, 4096, mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend|mr.UsageRecv)
	rdst := remoteOf(t, dst)
	const size = 4096
	A, O := rpma.CompletionAlways, rpma.CompletionOnError
	var v [8]byte
	for name, err := range map[string]error{
		"atomic misaligned":       client.AtomicWrite(rdst, 4, v, A, 1),
		"atomic misaligned 12":    client.AtomicWrite(rdst, 12, v, A, 1),
		"atomic past the end":     client.AtomicWrite(rdst, size, v, A, 1),
		"atomic negative":         client.AtomicWrite(rdst, -8, v, A, 1),
		"atomic nil":              client.AtomicWrite(nil, 0, v, A, 1),
		"write remote overflow":   client.Write(rdst, size-10, src, 0, 11, A, 1),
		"write local overflow":    client.Write(rdst, 0, src, size-10, 11, A, 1),
		"write negative length":   client.Write(rdst, 0, src, 0, -1, A, 1),
		"write one region":        client.Write(rdst, 0, nil, 0, 0, A, 1),
		"write no region, length": client.Write(nil, 0, nil, 0, 8, A, 1),
		"read remote overflow":    client.Read(src, 0, rdst, size, 1, A, 1),
		"read local overflow":     client.Read(src, size, rdst, 0, 1, A, 1),
		"flush range overflow":    client.Flush(rdst, 4000, 97, rpma.FlushVisibility, A, 1),
		"flush unknown type":      client.Flush(rdst, 0, 8, rpma.FlushType(7), A, 1),
		"send overflow":           client.Send(src, size-1, 2, A, 1),
		"recv overflow":           client.Recv(src, 1, size, 1),
		"flags zero":              client.Write(rdst, 0, src, 0, 8, 0, 1),
		"flags unknown":           client.Write(rdst, 0, src, 0, 8, 4, 1),
		"chain overflow":          client.WriteAndFlush(rdst, size-8, src, 0, 16, rpma.FlushVisibility, O, 1),
	} {
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, name)
		t.Logf("%s: %v", name, err)
	}
	// The emulated flush reads 8 bytes at the flushed offset: a flush of
	// the region's last 4 bytes would read past its end. A native flush
	// reads nothing and may.
	err := client.Flush(rdst, size-4, 4, rpma.FlushVisibility, A, 8)
	if client.NativeFlush() {
		require.NoError(t, err)
		okWC(t, ctx, client.CQ(), rpma.WCFlush, 8)
	} else {
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "flush read past the end")
	}
	require.NoError(t, client.Broken())
	require.NoError(t, client.Write(rdst, 0, src, 0, 8, A, 9))
	okWC(t, ctx, client.CQ(), rpma.WCRDMAWrite, 9)
}
