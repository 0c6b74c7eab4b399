package conn

import (
	"context"

	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/mr"
)

// MaxBatch is the most operations [Conn.WriteBatchAsync] and
// [Conn.ReadBatchAsync] post at once.
const MaxBatch = core.MaxBatch

// Transfer is one operation of a batch: Len bytes between Local at
// LocalOff and Remote at RemoteOff (from Local to Remote in a write
// batch, the other way in a read batch).
type Transfer struct {
	Remote    *mr.Remote
	RemoteOff int
	Local     *mr.Local
	LocalOff  int
	Len       int
}

// WriteBatchAsync posts the RDMA writes ts (1 to [MaxBatch] of them, at
// most the send queue's size) as one chain: one crossing into the
// provider and one doorbell for all of them, where posting them one by
// one costs one of each per write. It stores in ops[i] the [Op] of ts[i]
// (ops must hold len(ts)); each Op's Wait returns that write's own
// completion. Every transfer is checked before anything is posted (an
// error naming the first bad one matches [rpma.ErrInvalidArgument]), and
// the call waits for room for the whole batch with ctx. It returns how
// many were posted: len(ts), or, when the provider refused part of the
// chain, the first ones, whose Ops are valid, with an error.
func (c *Conn) WriteBatchAsync(ctx context.Context, ts []Transfer, ops []Op) (int, error) {
	return c.batch(ctx, false, ts, ops)
}

// ReadBatchAsync is [Conn.WriteBatchAsync] for RDMA reads: ts[i] reads
// Len bytes of Remote at RemoteOff into Local at LocalOff, there once
// ops[i].Wait returned nil.
func (c *Conn) ReadBatchAsync(ctx context.Context, ts []Transfer, ops []Op) (int, error) {
	return c.batch(ctx, true, ts, ops)
}

func (c *Conn) batch(ctx context.Context, read bool, ts []Transfer, ops []Op) (int, error) {
	if len(ops) < len(ts) {
		op := "write_batch"
		if read {
			op = "read_batch"
		}
		return 0, rpmaerr.Inval(op, "%d operations and room for %d Ops", len(ts), len(ops))
	}
	return c.core().PostBatch(ctx, read, len(ts), func(i int) core.Transfer {
		t := &ts[i]
		return core.Transfer{Remote: remote(t.Remote), RemoteOff: t.RemoteOff, Local: local(t.Local), LocalOff: t.LocalOff, Len: t.Len}
	}, func(i int, p core.Pending) { ops[i] = Op{p} })
}
