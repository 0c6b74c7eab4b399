//go:build linux && cgo

package conn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationAsync: one goroutine keeps many operations in flight
// with the asynchronous calls and waits for each later; every one
// returns its own completion, the bytes arrive, the posts beyond the
// send queue's 10 slots wait for room instead of failing, and nothing
// allocates per operation.
func TestIntegrationAsync(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	client, server := pairCfg(t, p, e, ip, nil, nil, nil)
	const n, size = 64, 64
	dst, dstMem := region(t, p, n*size+64, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageAtomicDst|mr.UsageFlushVisibility)
	rdst := extRemoteOf(t, dst)
	src, srcMem := region(t, p, 2*n*size, mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend)

	t.Run("writes in flight", func(t *testing.T) {
		for i := range n {
			copy(srcMem[i*size:(i+1)*size], bytes.Repeat([]byte{byte(i + 1)}, size))
		}
		ops := make([]conn.Op, n)
		for i := range n {
			op, err := client.WriteAsync(ctx, rdst, i*size, src, i*size, size)
			require.NoError(t, err, "post %d: past the queue's room a post waits, never fails", i)
			ops[i] = op
		}
		// Waited for in reverse: each Op has its own completion.
		for i := n - 1; i >= 0; i-- {
			wc, err := ops[i].Wait(ctx)
			require.NoError(t, err, "op %d", i)
			require.Equal(t, rpma.WCRDMAWrite, wc.Opcode)
		}
		require.Equal(t, srcMem[:n*size], dstMem[:n*size], "the bytes of every write arrived")
		noCompletion(t, client.CQ())
	})

	t.Run("reads, a flush and atomics", func(t *testing.T) {
		back := srcMem[n*size:]
		clear(back)
		reads := make([]conn.Op, 8)
		for i := range reads {
			op, err := client.ReadAsync(ctx, src, n*size+i*size, rdst, i*size, size)
			require.NoError(t, err)
			reads[i] = op
		}
		fl, err := client.FlushAsync(ctx, rdst, 0, n*size, rpma.FlushVisibility)
		require.NoError(t, err)
		binary.NativeEndian.PutUint64(dstMem[n*size:], 40)
		faa, err := client.FetchAndAddAsync(ctx, rdst, n*size, src, 0, 2)
		require.NoError(t, err)
		// Waited for out of order, each gets its own kind of completion.
		wc, err := faa.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.WCFetchAdd, wc.Opcode)
		wc, err = fl.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, flushOp(client), wc.Opcode)
		for i, op := range reads {
			wc, err := op.Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, rpma.WCRDMARead, wc.Opcode)
			require.Equal(t, dstMem[i*size:(i+1)*size], back[i*size:(i+1)*size], "read %d", i)
		}
		require.Equal(t, uint64(40), binary.NativeEndian.Uint64(srcMem[0:]), "the old value")
		require.Equal(t, uint64(42), binary.NativeEndian.Uint64(dstMem[n*size:]))
	})

	t.Run("send and receive", func(t *testing.T) {
		in, inMem := region(t, p, 64, mr.UsageRecv)
		rop, err := server.RecvAsync(ctx, in, 0, 64)
		require.NoError(t, err)
		copy(srcMem, "async hello")
		sop, err := client.SendAsync(ctx, src, 0, 11)
		require.NoError(t, err)
		_, err = sop.Wait(ctx)
		require.NoError(t, err)
		wc, err := rop.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, "async hello", string(inMem[:wc.ByteLen]))
	})

	t.Run("waited once", func(t *testing.T) {
		op, err := client.WriteAsync(ctx, rdst, 0, src, 0, 8)
		require.NoError(t, err)
		_, err = op.Wait(ctx)
		require.NoError(t, err)
		_, err = op.Wait(ctx)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "a second Wait")
		_, err = (conn.Op{}).Wait(ctx)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "the zero Op")
	})

	t.Run("ctx ends first", func(t *testing.T) {
		// A receive nothing is sent to: its Wait ends with the ctx, the
		// outcome unknown; the connection goes on working.
		in, inMem := region(t, p, 64, mr.UsageRecv)
		rop, err := server.RecvAsync(ctx, in, 0, 64)
		require.NoError(t, err)
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err = rop.Wait(short)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, rpma.ErrOutcomeUnknown)
		_, err = rop.Wait(ctx)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "an Op whose wait ended is spent")
		// The abandoned receive takes the next message, whose
		// completion nobody gets; the one after goes to a new receive.
		copy(srcMem, "first")
		require.NoError(t, client.SendWait(ctx, src, 0, 5))
		require.Equal(t, "first", string(inMem[:5]))
		rop, err = server.RecvAsync(ctx, in, 8, 8)
		require.NoError(t, err)
		copy(srcMem, "second")
		require.NoError(t, client.SendWait(ctx, src, 0, 6))
		wc, err := rop.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, "second", string(inMem[8:8+wc.ByteLen]))
		noCompletion(t, server.CQ())
	})

	t.Run("batches", func(t *testing.T) {
		// 10 writes (the send queue's size) in one chain: one crossing.
		const k = 10
		ts := make([]conn.Transfer, k)
		for i := range ts {
			copy(srcMem[i*size:(i+1)*size], bytes.Repeat([]byte{byte(0x80 + i)}, size))
			ts[i] = conn.Transfer{Remote: rdst, RemoteOff: i * size, Local: src, LocalOff: i * size, Len: size}
		}
		ops := make([]conn.Op, k)
		before := client.Stats()
		crossings := cgoCalls()
		posted, err := client.WriteBatchAsync(ctx, ts, ops)
		crossed := cgoCalls() - crossings
		require.NoError(t, err)
		require.Equal(t, k, posted)
		require.EqualValues(t, 1, crossed, "one crossing posts the whole chain")
		for i := k - 1; i >= 0; i-- {
			wc, err := ops[i].Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, rpma.WCRDMAWrite, wc.Opcode)
		}
		require.Equal(t, srcMem[:k*size], dstMem[:k*size])
		require.Equal(t, before.Writes+k, client.Stats().Writes)

		// Reads back, as one chain.
		for i := range ts {
			ts[i].LocalOff = n*size + i*size
		}
		clear(srcMem[n*size:])
		posted, err = client.ReadBatchAsync(ctx, ts, ops)
		require.NoError(t, err)
		require.Equal(t, k, posted)
		for i := range k {
			wc, err := ops[i].Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, rpma.WCRDMARead, wc.Opcode)
		}
		require.Equal(t, dstMem[:k*size], srcMem[n*size:n*size+k*size])

		// Refused before anything is posted: a bad transfer, a batch
		// larger than the send queue, too few Ops.
		before = client.Stats()
		bad := append([]conn.Transfer(nil), ts...)
		bad[3].RemoteOff = n * size * 2
		_, err = client.WriteBatchAsync(ctx, bad, ops)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		require.ErrorContains(t, err, "operation 3 of the batch")
		_, err = client.WriteBatchAsync(ctx, append(ts, ts[0]), make([]conn.Op, k+1))
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		_, err = client.WriteBatchAsync(ctx, ts, ops[:2])
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		_, err = client.WriteBatchAsync(ctx, nil, ops)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		require.Equal(t, before, client.Stats(), "nothing posted")
		noCompletion(t, client.CQ())
	})

	t.Run("allocations", func(t *testing.T) {
		bg := context.Background()
		allocs := testing.AllocsPerRun(200, func() {
			op, err := client.WriteAsync(bg, rdst, 0, src, 0, 64)
			if err == nil {
				_, err = op.Wait(bg)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
		bound := 0.0
		if raceEnabled {
			bound = 2 // the race detector's instrumentation (as TestIntegrationZeroAllocs)
		}
		require.LessOrEqual(t, allocs, bound, "allocations per WriteAsync and Wait")
		t.Logf("%.2f allocs/op", allocs)

		ts := make([]conn.Transfer, 8)
		for i := range ts {
			ts[i] = conn.Transfer{Remote: rdst, RemoteOff: i * size, Local: src, LocalOff: i * size, Len: size}
		}
		ops := make([]conn.Op, len(ts))
		allocs = testing.AllocsPerRun(100, func() {
			_, err := client.WriteBatchAsync(bg, ts, ops)
			for i := 0; err == nil && i < len(ops); i++ {
				_, err = ops[i].Wait(bg)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
		if raceEnabled {
			// Measured: 8 under -race (its sync.Pool drops a quarter of
			// what is put back, and its instrumentation allocates), 0
			// without.
			bound = float64(len(ts))
		}
		require.LessOrEqual(t, allocs, bound, "allocations per batch of 8 and their waits")
		t.Logf("%.2f allocs per batch of 8", allocs)
	})
}
