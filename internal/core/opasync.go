package core

import (
	"context"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Operations waited for later: the per-operation calls split in two, for
// one goroutine that keeps many operations in flight. The post half
// (WriteAsync and the rest) waits for room as the waiting calls do and
// returns a Pending: the claim of the posted request (claim.go) and the
// claim's generation, so that a Pending whose claim went back to the pool
// is refused rather than confused with the claim's next owner. The wait
// half (Pending.Wait) is awaitClaim. A Pending costs nothing beyond the
// claim, which comes from the pool: no allocation per operation.

// Pending is a posted operation whose completion its caller waits for
// later, once.
type Pending struct {
	q   *CQ
	cl  *opClaim
	gen uint32
}

// postLater is runWait's post half: the operation posted, its claim as a
// Pending.
func (c *Conn) postLater(ctx context.Context, op string, q *CQ, recv bool, need uint64, post postFor) (Pending, error) {
	switch {
	case c == nil:
		return Pending{}, errNil(op, "connection")
	case ctx == nil:
		return Pending{}, errNil(op, "context")
	}
	if err := ctx.Err(); err != nil {
		return Pending{}, err
	}
	if q == nil || !q.enter() {
		return Pending{}, errClosed(op, "connection")
	}
	defer q.exit()
	cl, err := q.postClaimed(ctx, op, recv, need, false, post)
	if err != nil {
		return Pending{}, err
	}
	return Pending{q: q, cl: cl, gen: cl.gen.Load()}, nil
}

// Wait is conn.Op.Wait's core; see there.
func (p Pending) Wait(ctx context.Context) (WC, error) {
	const op = "op_wait"
	q, cl := p.q, p.cl
	switch {
	case ctx == nil:
		return WC{}, errNil(op, "context")
	case cl == nil:
		return WC{}, rpmaerr.Inval(op, "no operation (the zero value)")
	}
	if !q.enter() {
		return WC{}, errClosed(op, "connection")
	}
	defer q.exit()
	q.dl.mu.Lock()
	if cl.gen.Load() != p.gen || cl.taken {
		q.dl.mu.Unlock()
		return WC{}, rpmaerr.Inval(op, "the operation was waited for already")
	}
	cl.taken = true
	q.dl.mu.Unlock()
	return q.awaitClaim(ctx, cl)
}

// sendLater is postLater for an operation of the send queue.
func (c *Conn) sendLater(ctx context.Context, op string, need uint64, post postFor) (Pending, error) {
	if c == nil {
		return Pending{}, errNil(op, "connection")
	}
	return c.postLater(ctx, op, c.cq, false, need, post)
}

// WriteAsync is WriteWait's post: Pending.Wait returns once it completed.
func (c *Conn) WriteAsync(ctx context.Context, dst *RemoteMR, dstOff int, src *MR, srcOff, n int) (Pending, error) {
	const op = "write_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.write(op, dst, dstOff, src, srcOff, n, rpma.CompletionAlways, 0, cl)
	})
}

// ReadAsync is ReadWait's post.
func (c *Conn) ReadAsync(ctx context.Context, dst *MR, dstOff int, src *RemoteMR, srcOff, n int) (Pending, error) {
	const op = "read_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.read(op, dst, dstOff, src, srcOff, n, rpma.CompletionAlways, 0, cl)
	})
}

// FlushAsync is FlushWait's post.
func (c *Conn) FlushAsync(ctx context.Context, dst *RemoteMR, dstOff, n int, typ rpma.FlushType) (Pending, error) {
	const op = "flush_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.flush(op, dst, dstOff, n, typ, rpma.CompletionAlways, 0, cl)
	})
}

// WriteAndFlushAsync is WriteAndFlushWait's post.
func (c *Conn) WriteAndFlushAsync(ctx context.Context, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType) (Pending, error) {
	const op = "write_and_flush_async"
	return c.sendLater(ctx, op, 2, func(cl *opClaim) error {
		return c.writeAndFlush(op, dst, dstOff, src, srcOff, n, typ, rpma.CompletionAlways, 0, cl)
	})
}

// AtomicWriteAsync is AtomicWriteWait's post.
func (c *Conn) AtomicWriteAsync(ctx context.Context, dst *RemoteMR, dstOff int, src [8]byte) (Pending, error) {
	const op = "atomic_write_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.atomicWrite(op, dst, dstOff, src, rpma.CompletionAlways, 0, cl)
	})
}

// CompareAndSwapAsync is conn.Conn.CompareAndSwapAsync's core; see there.
func (c *Conn) CompareAndSwapAsync(ctx context.Context, dst *RemoteMR, dstOff int, result *MR, resultOff int, compare, swap uint64) (Pending, error) {
	const op = "compare_and_swap_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.remoteAtomic(op, ibv.OpAtomicCmpAndSwp, dst, dstOff, result, resultOff, compare, swap, rpma.CompletionAlways, 0, cl)
	})
}

// FetchAndAddAsync is conn.Conn.FetchAndAddAsync's core; see there.
func (c *Conn) FetchAndAddAsync(ctx context.Context, dst *RemoteMR, dstOff int, result *MR, resultOff int, add uint64) (Pending, error) {
	const op = "fetch_and_add_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.remoteAtomic(op, ibv.OpAtomicFetchAdd, dst, dstOff, result, resultOff, add, 0, rpma.CompletionAlways, 0, cl)
	})
}

// SendAsync is SendWait's post.
func (c *Conn) SendAsync(ctx context.Context, src *MR, off, n int) (Pending, error) {
	const op = "send_async"
	return c.sendLater(ctx, op, 1, func(cl *opClaim) error {
		return c.send(op, ibv.OpSend, src, off, n, rpma.CompletionAlways, 0, 0, cl)
	})
}

// RecvAsync is conn.Conn.RecvAsync's core; see there.
func (c *Conn) RecvAsync(ctx context.Context, dst *MR, off, n int) (Pending, error) {
	const op = "recv_async"
	if c == nil {
		return Pending{}, errNil(op, "connection")
	}
	q := c.rcq
	if q == nil {
		q = c.cq
	}
	return c.postLater(ctx, op, q, true, 1, func(cl *opClaim) error {
		return c.recv(op, dst, off, n, 0, cl)
	})
}
