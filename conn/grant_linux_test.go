//go:build linux && cgo

package conn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// grantRegion is the size of the region the grant tests serve.
const grantRegion = 16 << 10

// remoteOfGrant is what the grantee decodes from g's descriptor.
func remoteOfGrant(t *testing.T, g *conn.Grant) *mr.Remote {
	t.Helper()
	d := g.ExtendedDescriptor()
	r, err := mr.RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)
	return r
}

// forgedRemote is a descriptor the other side makes up: any address,
// size, key and usage (descriptors are not authenticated).
func forgedRemote(t *testing.T, addr uint64, size int, rkey uint32, usage mr.Usage) *mr.Remote {
	t.Helper()
	var d [mr.ExtendedDescriptorSize]byte
	binary.LittleEndian.PutUint64(d[0:], addr)
	binary.LittleEndian.PutUint64(d[8:], uint64(size))
	binary.LittleEndian.PutUint32(d[16:], rkey)
	d[20] = byte(usage)
	d[21] = byte(usage >> 8)
	r, err := mr.RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)
	return r
}

// refused asserts that the next completion of q is a remote access error
// (the device refused the key or the range).
func refused(t *testing.T, ctx context.Context, q *cq.CQ, what string) {
	t.Helper()
	wc := nextWC(t, ctx, q)
	require.ErrorIs(t, wc.Err(), &rpma.WCError{Status: rpma.WCRemAccessErr}, what)
}

// noCompletion asserts that q holds none of the caller's completions: the
// bind's are the library's.
func noCompletion(t *testing.T, q *cq.CQ) {
	t.Helper()
	var wc [4]cq.WC
	n, err := q.GetWC(wc[:])
	require.ErrorIs(t, err, rpma.ErrNoCompletion, "the bind's completion reached the caller: %+v", wc[:n])
}

// TestIntegrationGrants: a region registered with mr.UsageGranted is
// reached only through grants, each for one connection and within its
// range, until it is revoked or its connection closes; the region cannot
// be deregistered while a grant lives.
//
// On guessing: a type 2B window's key is valid only on the QP it was
// bound on, so the exact key (which the tests below use from the other
// connection) is the best guess there is; if it is refused, so is every
// guess of its 8 random bits. The base region's own key, exact too, is
// refused because its registration has no remote access.
func TestIntegrationGrants(t *testing.T) {
	ps, ip := newPeer(t)
	e := listen(t, ps, ip)
	base, mem := region(t, ps, grantRegion, mr.UsageGranted|mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageAtomicDst|mr.UsageFlushVisibility)
	for i := range mem {
		mem[i] = 0xAA
	}
	client, _ := newPeer(t)
	src, srcMem := region(t, client, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
	ctx := testCtx(t)

	c1, s1 := pairCfg(t, client, e, ip, nil, nil, nil)
	g, err := s1.Grant(ctx, base, 0, grantRegion, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageAtomicDst|mr.UsageFlushVisibility)
	require.NoError(t, err)
	require.True(t, g.Live())
	require.Equal(t, base.Addr(), g.Addr())
	require.Equal(t, grantRegion, g.Size())
	bd, gd := base.Descriptor(), g.Descriptor()
	require.NotEqual(t, bd[16:20], gd[16:20], "the grant's key is the window's, not the region's")
	noCompletion(t, s1.CQ())
	r1 := remoteOfGrant(t, g)

	t.Run("grantee", func(t *testing.T) {
		fill(srcMem, 0x11)
		require.NoError(t, c1.Write(r1, 128, src, 0, 64, rpma.CompletionAlways, 1))
		okWC(t, ctx, c1.CQ(), rpma.WCRDMAWrite, 1)
		require.NoError(t, c1.Flush(r1, 128, 64, rpma.FlushVisibility, rpma.CompletionAlways, 2))
		okWC(t, ctx, c1.CQ(), flushOp(c1), 2)
		require.Equal(t, bytes.Repeat([]byte{0x11}, 64), mem[128:192], "the grantee's write did not arrive")
		clear(srcMem)
		require.NoError(t, c1.Read(src, 0, r1, 1024, 64, rpma.CompletionAlways, 3))
		okWC(t, ctx, c1.CQ(), rpma.WCRDMARead, 3)
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), srcMem[:64], "the grantee's read did not return the bytes")
		binary.NativeEndian.PutUint64(mem[2048:], 40)
		require.NoError(t, c1.FetchAndAdd(r1, 2048, src, 8, 2, rpma.CompletionAlways, 4))
		okWC(t, ctx, c1.CQ(), rpma.WCFetchAdd, 4)
		require.Equal(t, uint64(40), binary.NativeEndian.Uint64(srcMem[8:]))
		require.Equal(t, uint64(42), binary.NativeEndian.Uint64(mem[2048:]))
		noCompletion(t, s1.CQ())
	})

	t.Run("an ended ctx", func(t *testing.T) {
		// Refused before the bind is posted: no grant, no completion,
		// and the region deregisters at once (no window holds it).
		_, s5 := pairCfg(t, client, e, ip, nil, nil, nil)
		own, _ := region(t, ps, 4096, mr.UsageGranted|mr.UsageWriteDst)
		ended, cancel := context.WithCancel(ctx)
		cancel()
		g5, err := s5.Grant(ended, own, 0, 4096, mr.UsageWriteDst)
		require.ErrorIs(t, err, context.Canceled)
		require.Nil(t, g5)
		noCompletion(t, s5.CQ())
		require.NoError(t, own.Dereg(), "a window still holds the region")
	})

	t.Run("an abandoned bind", func(t *testing.T) {
		// The bind completes after a 16 MiB write posted before it
		// (completions come in order; the write takes hundreds of ms on
		// rxe), so the grant's 20 ms ctx ends first: no grant, and the
		// window holds the region. Polling the write's completion polls
		// the bind's too, which lets the library revoke the abandoned
		// grant: the region deregisters without closing the connection.
		// (A receiver-not-ready stall is no good here: rxe re-executes
		// the bind when it retries the send before it, and the second
		// bind fails.)
		const big = 16 << 20
		_, s6 := pairCfg(t, client, e, ip, nil, nil, nil)
		own, _ := region(t, ps, 4096, mr.UsageGranted|mr.UsageWriteDst)
		bigSrc, _ := region(t, ps, big, mr.UsageWriteSrc)
		bigDst, _ := region(t, client, big, mr.UsageWriteDst)
		require.NoError(t, s6.Write(remoteOf(t, bigDst), 0, bigSrc, 0, big, rpma.CompletionAlways, 21))
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		g6, err := s6.Grant(short, own, 0, 4096, mr.UsageWriteDst)
		require.ErrorIs(t, err, context.DeadlineExceeded, "the bind completed before its ctx ended")
		require.ErrorContains(t, err, "revokes it once its completion is polled")
		require.Nil(t, g6)
		require.ErrorIs(t, own.Dereg(), syscall.EBUSY, "the queued bind's window holds the region")

		okWC(t, ctx, s6.CQ(), rpma.WCRDMAWrite, 21) // polls the bind's completion too
		noCompletion(t, s6.CQ())
		var derr error
		for range 500 { // the revocation runs on a goroutine of the library's: up to 5 s
			if derr = own.Dereg(); derr == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		require.NoError(t, derr, "the abandoned grant was not revoked")
		// The connection still works, and grants again.
		g6, err = s6.Grant(ctx, base, 0, 4096, mr.UsageWriteDst)
		require.NoError(t, err)
		require.NoError(t, g6.Revoke())
		noCompletion(t, s6.CQ())
	})

	t.Run("other connection with the grant's key", func(t *testing.T) {
		c2, _ := pairCfg(t, client, e, ip, nil, nil, nil)
		fill(srcMem, 0x22)
		require.NoError(t, c2.Write(r1, 4096, src, 0, 64, rpma.CompletionAlways, 5))
		refused(t, ctx, c2.CQ(), "a write with another connection's grant")
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), mem[4096:4160], "another connection's write arrived")

		c3, _ := pairCfg(t, client, e, ip, nil, nil, nil)
		clear(srcMem)
		require.NoError(t, c3.Read(src, 0, r1, 4096, 64, rpma.CompletionAlways, 6))
		refused(t, ctx, c3.CQ(), "a read with another connection's grant")
		require.NotContains(t, srcMem[:64], byte(0xAA), "the bytes reached another connection")
	})

	t.Run("the region's own key", func(t *testing.T) {
		// From the grantee's connection too: the region's key opens
		// nothing on any QP. It breaks the connection, so a new one.
		c4, s4 := pairCfg(t, client, e, ip, nil, nil, nil)
		bd := base.Descriptor()
		own := forgedRemote(t, base.Addr(), grantRegion, binary.LittleEndian.Uint32(bd[16:]), mr.UsageWriteDst)
		g4, err := s4.Grant(ctx, base, 0, grantRegion, mr.UsageWriteDst)
		require.NoError(t, err)
		defer g4.Revoke()
		fill(srcMem, 0x44)
		require.NoError(t, c4.Write(own, 4096, src, 0, 64, rpma.CompletionAlways, 7))
		refused(t, ctx, c4.CQ(), "a write with the region's own key")
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), mem[4096:4160], "a write with the region's own key arrived")
	})

	t.Run("narrow grant", func(t *testing.T) {
		c5, s5 := pairCfg(t, client, e, ip, nil, nil, nil)
		gn, err := s5.Grant(ctx, base, 8192, 4096, mr.UsageWriteDst)
		require.NoError(t, err)
		require.Equal(t, base.Addr()+8192, gn.Addr())
		rn := remoteOfGrant(t, gn)
		fill(srcMem, 0x55)
		require.NoError(t, c5.Write(rn, 0, src, 0, 64, rpma.CompletionAlways, 8))
		okWC(t, ctx, c5.CQ(), rpma.WCRDMAWrite, 8)
		require.Equal(t, bytes.Repeat([]byte{0x55}, 64), mem[8192:8256], "the write within the grant did not arrive")
		// The library refuses what the descriptor says is outside.
		require.ErrorIs(t, c5.Write(rn, 4096-32, src, 0, 64, rpma.CompletionAlways, 9), rpma.ErrInvalidArgument)
		// A descriptor that claims the whole region, with the grant's
		// key: the device must refuse what lies outside the grant.
		wide := forgedRemote(t, base.Addr(), grantRegion, gn.RKey(), mr.UsageWriteDst)
		require.NoError(t, c5.Write(wide, 4096, src, 0, 64, rpma.CompletionAlways, 10))
		refused(t, ctx, c5.CQ(), "a write outside a narrow grant")
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), mem[4096:4160], "a write outside the grant arrived")
		// Closing the connection revokes its grant.
		require.NoError(t, s5.Close())
		require.False(t, gn.Live(), "Close did not revoke the connection's grant")
		require.NoError(t, gn.Revoke(), "Revoke after Close")
	})

	t.Run("flush implies read", func(t *testing.T) {
		// A flush usage serves flushers of both kinds:
		// an emulated flush is a read of the flushed range, so a grant
		// of write and flush lets the grantee read, whatever the
		// descriptor says, in every build.
		c6, s6 := pairCfg(t, client, e, ip, nil, nil, nil)
		gf, err := s6.Grant(ctx, base, 0, 4096, mr.UsageWriteDst|mr.UsageFlushVisibility)
		require.NoError(t, err)
		claimed := forgedRemote(t, gf.Addr(), gf.Size(), gf.RKey(), mr.UsageReadSrc)
		clear(srcMem)
		require.NoError(t, c6.Read(src, 0, claimed, 1024, 64, rpma.CompletionAlways, 14))
		okWC(t, ctx, c6.CQ(), rpma.WCRDMARead, 14)
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), srcMem[:64])
	})

	t.Run("the bind's slot", func(t *testing.T) {
		// A send queue of one request: the bind takes it until its
		// completion, which the grant consumes, so the caller's next
		// post has the slot and its completion is the only one.
		one := conn.DefaultConfig()
		one.SQSize, one.CQSize = 1, 1
		c7, s7 := pairCfg(t, client, e, ip, one, one, nil)
		g7, err := s7.Grant(ctx, base, 0, grantRegion, mr.UsageWriteDst)
		require.NoError(t, err)
		noCompletion(t, s7.CQ())
		fill(srcMem, 0x99)
		r7 := remoteOfGrant(t, g7)
		require.NoError(t, c7.Write(r7, 64, src, 0, 8, rpma.CompletionAlways, 15))
		okWC(t, ctx, c7.CQ(), rpma.WCRDMAWrite, 15)
		// And a second grant gets the slot back too.
		g7b, err := s7.Grant(ctx, base, 0, 4096, mr.UsageWriteDst)
		require.NoError(t, err)
		require.NoError(t, g7b.Revoke())
		noCompletion(t, s7.CQ())
	})

	t.Run("dereg with a live grant", func(t *testing.T) {
		err := base.Dereg()
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		require.ErrorIs(t, err, syscall.EBUSY)
		// The region is still registered and reached.
		fill(srcMem, 0x66)
		require.NoError(t, c1.Write(r1, 256, src, 0, 8, rpma.CompletionAlways, 11))
		okWC(t, ctx, c1.CQ(), rpma.WCRDMAWrite, 11)
		require.Equal(t, bytes.Repeat([]byte{0x66}, 8), mem[256:264])
	})

	t.Run("refused before posting", func(t *testing.T) {
		plain, _ := region(t, ps, 4096, mr.UsageWriteDst)
		other, _ := newPeer(t)
		foreign, _ := region(t, other, 4096, mr.UsageGranted|mr.UsageWriteDst)
		for _, tc := range []struct {
			name  string
			m     *mr.Local
			off   int
			n     int
			usage mr.Usage
		}{
			{"region without UsageGranted", plain, 0, 4096, mr.UsageWriteDst},
			{"region of another peer", foreign, 0, 4096, mr.UsageWriteDst},
			{"usage outside the region's", base, 0, 4096, mr.UsageFlushPersistent},
			{"local usage", base, 0, 4096, mr.UsageWriteSrc},
			{"zero usage", base, 0, 4096, 0},
			{"empty range", base, 0, 0, mr.UsageWriteDst},
			{"range beyond the region", base, grantRegion - 8, 16, mr.UsageWriteDst},
			{"negative offset", base, -1, 16, mr.UsageWriteDst},
		} {
			_, err := s1.Grant(ctx, tc.m, tc.off, tc.n, tc.usage)
			require.ErrorIs(t, err, rpma.ErrInvalidArgument, tc.name)
		}
		var nilCtx context.Context // a nil context is the point
		_, err := s1.Grant(nilCtx, base, 0, 64, mr.UsageWriteDst)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		_, err = s1.Grant(ctx, nil, 0, 64, mr.UsageWriteDst)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		var zero conn.Conn
		_, err = zero.Grant(ctx, base, 0, 64, mr.UsageWriteDst)
		require.Error(t, err)
		// Nothing was posted: the connection and the grant still work.
		fill(srcMem, 0x77)
		require.NoError(t, c1.Write(r1, 512, src, 0, 8, rpma.CompletionAlways, 12))
		okWC(t, ctx, c1.CQ(), rpma.WCRDMAWrite, 12)
		require.Equal(t, bytes.Repeat([]byte{0x77}, 8), mem[512:520])
		noCompletion(t, s1.CQ())
	})

	t.Run("revoke", func(t *testing.T) {
		require.NoError(t, g.Revoke())
		require.False(t, g.Live())
		require.NoError(t, g.Revoke(), "Revoke is idempotent")
		fill(srcMem, 0x88)
		require.NoError(t, c1.Write(r1, 4096, src, 0, 64, rpma.CompletionAlways, 13))
		refused(t, ctx, c1.CQ(), "a write with a revoked grant")
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), mem[4096:4160], "a write with a revoked grant arrived")
	})
	// Every grant is gone (revoked, or its connection closed, or
	// revoked by the deferred call): the region deregisters.
	require.NoError(t, base.Dereg())
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}
