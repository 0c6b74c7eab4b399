package core

import (
	"context"
	"encoding/binary"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// The per-operation calls: each posts its operation through the mirror's
// post (the same checks, the same accounting) with a claim (claim.go), and
// returns once that operation has completed, whatever other goroutines
// post, poll or wait for on the connection. A full queue makes them wait
// for room with their context instead of failing.

// postFor posts an operation for claim cl, nil on success.
type postFor func(cl *opClaim) error

// isQueueFull reports whether err is the refusal of a post for room.
func isQueueFull(err error) bool {
	return err == errSQFull || err == errCQFull || err == errRQFull
}

// runWait posts with post for a claim of q, waiting for room while the
// queue (the receive queue when recv) or q is full, then waits for the
// operation's completion and returns it.
func (c *Conn) runWait(ctx context.Context, op string, q *CQ, recv bool, need uint64, post postFor) (WC, error) {
	switch {
	case c == nil:
		return WC{}, errNil(op, "connection")
	case ctx == nil:
		return WC{}, errNil(op, "context")
	}
	if err := ctx.Err(); err != nil {
		return WC{}, err
	}
	if q == nil || !q.enter() {
		return WC{}, errClosed(op, "connection")
	}
	defer q.exit()
	// With other calls in progress, a request the connection's posts can
	// combine goes on the combining list and its call yields before the
	// post, not after its completion (combine.go).
	combine := q.callers.Add(1) > 1 && !q.dl.tune.NoCombine
	cl, err := q.postClaimed(ctx, op, recv, need, combine, post)
	if err != nil {
		q.callers.Add(-1)
		return WC{}, err
	}
	yielded := cl.combined
	wc, err := q.awaitClaim(ctx, cl)
	if !yielded && q.callers.Load() > 1 {
		// Other calls are in progress: let their goroutines run before
		// this one calls again (the turn-taking, tuning.go). This call
		// counts as in progress until after its yield, so that a
		// goroutine that yielded makes the others yield too.
		gosched()
	}
	q.callers.Add(-1)
	return wc, err
}

// postClaimed posts with post for a new claim of q, waiting for room
// while the queue (the receive queue when recv) or q is full, and returns
// the claim, whose completion is to come; the caller has entered q.
func (q *CQ) postClaimed(ctx context.Context, op string, recv bool, need uint64, combine bool, post postFor) (*opClaim, error) {
	cl := q.newClaim(op)
	cl.combine = combine
	// A call does not overtake those already waiting for room, nor those
	// woken for room that have not posted yet (wakeRoom); one woken for
	// room that another call took (a mirror's post) goes back to the
	// queue's head.
	waited := false
	if q.roomWaiters.Load() != 0 || q.promising.Load() != 0 {
		if err := q.waitForRoom(ctx, cl, need, recv, false); err != nil {
			return nil, err
		}
		waited = true
		cl.combine = false
	}
	for {
		err := post(cl)
		if waited {
			q.postedPromised(cl)
		}
		if err == nil {
			return cl, nil
		}
		if !isQueueFull(err) {
			q.freeClaim(cl)
			return nil, err
		}
		if err := q.waitForRoom(ctx, cl, need, recv, waited); err != nil {
			return nil, err
		}
		waited = true
		// Woken for room: post at once, for the room counted for it.
		cl.combine = false
	}
}

// postedPromised ends the room promise of cl, woken for room, once its
// post was made (whatever its outcome: posted, the room is its own; refused,
// it queues again), and wakes those the room left over is enough for.
func (q *CQ) postedPromised(cl *opClaim) {
	q.dl.mu.Lock()
	if q.dropPromise(cl) {
		q.wakeRoom()
	}
	q.dl.mu.Unlock()
}

// waitForRoom queues cl for need slots of its queue (at the head when
// head) and waits until it is woken for room. On an error cl is gone.
func (q *CQ) waitForRoom(ctx context.Context, cl *opClaim, need uint64, recv, head bool) error {
	q.dl.mu.Lock()
	q.queueForRoom(cl, need, recv, head)
	q.wakeRoom() // the room may be there already
	q.dl.mu.Unlock()
	if _, err := q.awaitClaim(ctx, cl); err != nil {
		return err
	}
	cl.need = 0
	select { // the wake-up for room, if the wait did not take it
	case <-cl.wake:
	default:
	}
	return nil
}

// sendWait is runWait for an operation of the send queue.
func (c *Conn) sendWait(ctx context.Context, op string, need uint64, post postFor) error {
	if c == nil {
		return errNil(op, "connection")
	}
	_, err := c.runWait(ctx, op, c.cq, false, need, post)
	return err
}

// WriteWait is Write posted for the caller, returning once it completed.
func (c *Conn) WriteWait(ctx context.Context, dst *RemoteMR, dstOff int, src *MR, srcOff, n int) error {
	const op = "write_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.write(op, dst, dstOff, src, srcOff, n, rpma.CompletionAlways, 0, cl)
	})
}

// WriteWithImmWait is conn.Conn.WriteWithImmWait's core; see there.
func (c *Conn) WriteWithImmWait(ctx context.Context, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, imm uint32) error {
	const op = "write_with_imm_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.writeWithImm(op, dst, dstOff, src, srcOff, n, rpma.CompletionAlways, imm, 0, cl)
	})
}

// ReadWait is conn.Conn.ReadWait's core; see there.
func (c *Conn) ReadWait(ctx context.Context, dst *MR, dstOff int, src *RemoteMR, srcOff, n int) error {
	const op = "read_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.read(op, dst, dstOff, src, srcOff, n, rpma.CompletionAlways, 0, cl)
	})
}

// FlushWait is Flush posted for the caller, returning once it completed.
func (c *Conn) FlushWait(ctx context.Context, dst *RemoteMR, dstOff, n int, typ rpma.FlushType) error {
	const op = "flush_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.flush(op, dst, dstOff, n, typ, rpma.CompletionAlways, 0, cl)
	})
}

// WriteAndFlushWait is conn.Conn.WriteAndFlushWait's core; see there.
func (c *Conn) WriteAndFlushWait(ctx context.Context, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType) error {
	const op = "write_and_flush_wait"
	return c.sendWait(ctx, op, 2, func(cl *opClaim) error {
		return c.writeAndFlush(op, dst, dstOff, src, srcOff, n, typ, rpma.CompletionAlways, 0, cl)
	})
}

// AtomicWriteWait is conn.Conn.AtomicWriteWait's core; see there.
func (c *Conn) AtomicWriteWait(ctx context.Context, dst *RemoteMR, dstOff int, src [8]byte) error {
	const op = "atomic_write_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.atomicWrite(op, dst, dstOff, src, rpma.CompletionAlways, 0, cl)
	})
}

// CompareAndSwapWait is conn.Conn.CompareAndSwapWait's core; see there.
func (c *Conn) CompareAndSwapWait(ctx context.Context, dst *RemoteMR, dstOff int, result *MR, resultOff int, compare, swap uint64) (uint64, error) {
	const op = "compare_and_swap_wait"
	return c.remoteAtomicWait(ctx, op, ibv.OpAtomicCmpAndSwp, dst, dstOff, result, resultOff, compare, swap)
}

// FetchAndAddWait is conn.Conn.FetchAndAddWait's core; see there.
func (c *Conn) FetchAndAddWait(ctx context.Context, dst *RemoteMR, dstOff int, result *MR, resultOff int, add uint64) (uint64, error) {
	const op = "fetch_and_add_wait"
	return c.remoteAtomicWait(ctx, op, ibv.OpAtomicFetchAdd, dst, dstOff, result, resultOff, add, 0)
}

func (c *Conn) remoteAtomicWait(ctx context.Context, op string, aop ibv.SendOp, dst *RemoteMR, dstOff int, result *MR, resultOff int, compareAdd, swap uint64) (uint64, error) {
	err := c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.remoteAtomic(op, aop, dst, dstOff, result, resultOff, compareAdd, swap, rpma.CompletionAlways, 0, cl)
	})
	if err != nil {
		return 0, err
	}
	// The device wrote the old value in host order (checked before the
	// post: the 8 bytes are within result).
	return binary.NativeEndian.Uint64(result.buf[resultOff : resultOff+atomicSize]), nil
}

// SendWait is conn.Conn.SendWait's core; see there.
func (c *Conn) SendWait(ctx context.Context, src *MR, off, n int) error {
	const op = "send_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.send(op, ibv.OpSend, src, off, n, rpma.CompletionAlways, 0, 0, cl)
	})
}

// SendWithImmWait is conn.Conn.SendWithImmWait's core; see there.
func (c *Conn) SendWithImmWait(ctx context.Context, src *MR, off, n int, imm uint32) error {
	const op = "send_with_imm_wait"
	return c.sendWait(ctx, op, 1, func(cl *opClaim) error {
		return c.send(op, ibv.OpSendWithImm, src, off, n, rpma.CompletionAlways, imm, 0, cl)
	})
}

// RecvWait is conn.Conn.RecvWait's core; see there.
func (c *Conn) RecvWait(ctx context.Context, dst *MR, off, n int) (WC, error) {
	const op = "recv_wait"
	if c == nil {
		return WC{}, errNil(op, "connection")
	}
	q := c.rcq
	if q == nil {
		q = c.cq
	}
	return c.runWait(ctx, op, q, true, 1, func(cl *opClaim) error {
		return c.recv(op, dst, off, n, 0, cl)
	})
}
