package conn

import (
	"context"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// The per-operation calls (the "...Wait" methods) post one operation and
// return once it has completed; see "Many goroutines, one connection" in
// the package documentation for their contract.

// WriteWait writes n bytes of src at srcOff to dst at dstOff (an RDMA
// write, as [Conn.Write]) and returns once the write has completed: the
// bytes have reached the other side's device (they are placed, not yet
// durable: use [Conn.WriteAndFlushWait] for that), and src may be reused.
func (c *Conn) WriteWait(ctx context.Context, dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int) error {
	return c.core().WriteWait(ctx, remote(dst), dstOff, local(src), srcOff, n)
}

// WriteWithImmWait is [Conn.WriteWithImm] (imm in host order) that
// returns once the write has completed.
func (c *Conn) WriteWithImmWait(ctx context.Context, dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int, imm uint32) error {
	return c.core().WriteWithImmWait(ctx, remote(dst), dstOff, local(src), srcOff, n, imm)
}

// ReadWait reads n bytes of src at srcOff into dst at dstOff (an RDMA
// read, as [Conn.Read]) and returns once they are in dst.
func (c *Conn) ReadWait(ctx context.Context, dst *mr.Local, dstOff int, src *mr.Remote, srcOff, n int) error {
	return c.core().ReadWait(ctx, local(dst), dstOff, remote(src), srcOff, n)
}

// FlushWait flushes [dstOff, dstOff+n) of dst (as [Conn.Flush], with its
// requirements) and returns once the flush has completed: the bytes
// written to that range before it are durable (rpma.FlushPersistent) or
// visible (rpma.FlushVisibility) on the other side.
func (c *Conn) FlushWait(ctx context.Context, dst *mr.Remote, dstOff, n int, typ rpma.FlushType) error {
	return c.core().FlushWait(ctx, remote(dst), dstOff, n, typ)
}

// WriteAndFlushWait writes n bytes of src at srcOff to dst at dstOff,
// flushes them (typ: rpma.FlushPersistent or rpma.FlushVisibility, with
// the requirements of [Conn.Flush]) and returns once that flush has
// completed: when it returns nil the bytes are durable (or visible) on
// the other side. It is the chain of [Conn.WriteAndFlush] (one crossing,
// one doorbell, two send-queue slots), posted for this call alone.
func (c *Conn) WriteAndFlushWait(ctx context.Context, dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int, typ rpma.FlushType) error {
	return c.core().WriteAndFlushWait(ctx, remote(dst), dstOff, local(src), srcOff, n, typ)
}

// AtomicWriteWait writes the 8 bytes of src to the aligned word at dstOff
// of dst (as [Conn.AtomicWrite]: native or emulated, fenced) and returns
// once the write has completed.
func (c *Conn) AtomicWriteWait(ctx context.Context, dst *mr.Remote, dstOff int, src [8]byte) error {
	return c.core().AtomicWriteWait(ctx, remote(dst), dstOff, src)
}

// CompareAndSwapWait is [Conn.CompareAndSwap] (with its requirements)
// that returns, once it has completed, the word's old value, which it
// reads from the 8 bytes at resultOff of result: the swap happened
// exactly when it equals compare.
func (c *Conn) CompareAndSwapWait(ctx context.Context, dst *mr.Remote, dstOff int, result *mr.Local, resultOff int, compare, swap uint64) (old uint64, err error) {
	return c.core().CompareAndSwapWait(ctx, remote(dst), dstOff, local(result), resultOff, compare, swap)
}

// FetchAndAddWait is [Conn.FetchAndAdd] (with its requirements) that
// returns, once it has completed, the word's old value, which it reads
// from the 8 bytes at resultOff of result.
func (c *Conn) FetchAndAddWait(ctx context.Context, dst *mr.Remote, dstOff int, result *mr.Local, resultOff int, add uint64) (old uint64, err error) {
	return c.core().FetchAndAddWait(ctx, remote(dst), dstOff, local(result), resultOff, add)
}

// SendWait sends n bytes of src at off (as [Conn.Send]) and returns once
// the send has completed: the other side has received the message into a
// receive it posted.
func (c *Conn) SendWait(ctx context.Context, src *mr.Local, off, n int) error {
	return c.core().SendWait(ctx, local(src), off, n)
}

// SendWithImmWait is [Conn.SendWithImm] (imm in host order) that returns
// once the send has completed.
func (c *Conn) SendWithImmWait(ctx context.Context, src *mr.Local, off, n int, imm uint32) error {
	return c.core().SendWithImmWait(ctx, local(src), off, n, imm)
}

// RecvWait posts a receive of up to n bytes into dst at off (as
// [Conn.Recv]) and returns its completion once a message has landed
// there: wc.ByteLen is the message's length, wc.Imm its immediate data
// (host order) when wc.Flags has cq.WithImm. Receives complete in the
// order they were posted, so a message goes to the receive posted first,
// RecvWait's or the mirror's. A connection that receives through an SRQ
// refuses it (rpma.ErrInvalidArgument).
func (c *Conn) RecvWait(ctx context.Context, dst *mr.Local, off, n int) (cq.WC, error) {
	wc, err := c.core().RecvWait(ctx, local(dst), off, n)
	return cq.WC(wc), err
}
