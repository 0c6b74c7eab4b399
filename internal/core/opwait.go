package core

import (
	"context"
	"errors"

	"github.com/gorpma/rpma/rpma"
)

// The per-operation calls: a post whose call returns once its own
// request has completed, whatever other goroutines post or wait for on
// the connection (claim.go).

// WriteAndFlushWait posts the chain of WriteAndFlush for the caller (no
// op context: the completion is the call's own) and waits for the
// flush's completion: when it returns nil, the bytes are where typ says.
// A full send queue or CQ makes it wait for room, with ctx. An error
// after the post whose cause is ctx says the outcome is unknown.
func (c *Conn) WriteAndFlushWait(ctx context.Context, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType) error {
	const op = "write_and_flush_wait"
	if ctx == nil {
		return errNil(op, "context")
	}
	if c == nil || !src.fits(c.peer, UsageWriteSrc, srcOff, n) || !dst.fits(UsageWriteDst, dstOff, n) || !c.flushFits(dst, dstOff, n, typ) {
		if err := c.checkWriteAndFlush(op, dst, dstOff, src, srcOff, n, typ, rpma.CompletionAlways); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q := c.cq
	if q == nil || !q.enter() {
		return errClosed(op, "connection")
	}
	defer q.exit()
	cl, s, err := c.reserveClaimed(ctx, op, 2)
	if err != nil {
		return err
	}
	err = c.postWriteFlush(s, dst, dstOff, src, srcOff, n, typ, true, 0, cl)
	if err != nil {
		q.freeClaim(cl)
		c.dl.mu.Unlock()
		return err
	}
	c.dl.unlockAfterCrossing()
	_, err = q.awaitClaim(ctx, cl)
	return err
}

// reserveClaimed takes n send-queue slots and a claim for a
// per-operation call, waiting for room while the send queue or the CQ is
// full. It returns with the data lock held on success, and without it
// (nothing taken) on error. The caller has entered c.cq.
func (c *Conn) reserveClaimed(ctx context.Context, op string, n uint64) (*opClaim, uint64, error) {
	q := c.cq
	d, err := c.lockData(op)
	if err != nil {
		return nil, 0, err
	}
	cl := q.newClaim(op)
	for {
		s, err := c.q.sq.reserve(n)
		if err == nil {
			return cl, s, nil
		}
		if !errors.Is(err, rpma.ErrQueueFull) {
			q.freeClaim(cl)
			d.mu.Unlock()
			return nil, 0, err
		}
		cl.need = n
		d.mu.Unlock()
		if _, err := q.awaitClaim(ctx, cl); err != nil {
			return nil, 0, err // awaitClaim freed cl
		}
		cl.need = 0
		if d, err = c.lockData(op); err != nil {
			return nil, 0, err
		}
	}
}
