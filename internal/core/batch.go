package core

import (
	"context"
	"fmt"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Batches: several RDMA writes or reads posted as one chain (one
// crossing, one doorbell: ibv.QP.PostBatch), each with a claim of its own
// (claim.go), so that each is waited for as a Pending. The batch takes
// its slots at once: it waits for room for all of them (the first claim
// queues for it), and a batch larger than the send queue is refused.

// MaxBatch is the most operations a batch posts.
const MaxBatch = ibv.MaxBatch

// Transfer is one operation of a batch: Len bytes between Local at
// LocalOff and Remote at RemoteOff.
type Transfer struct {
	Remote    *RemoteMR
	RemoteOff int
	Local     *MR
	LocalOff  int
	Len       int
}

// PostBatch posts n transfers (at(i) gives the i-th), RDMA reads when
// read, else RDMA writes, as one chain, and hands the Pending of each to
// out(i, p). Every transfer is checked before anything is posted. It
// waits for room for the whole batch with ctx. On an error after the
// provider accepted part of the chain, the first posted transfers have
// their Pendings (out was called for them) and posted says how many.
func (c *Conn) PostBatch(ctx context.Context, read bool, n int, at func(i int) Transfer, out func(i int, p Pending)) (posted int, err error) {
	op := "write_batch"
	lneed, rneed := UsageWriteSrc, UsageWriteDst
	if read {
		op, lneed, rneed = "read_batch", UsageReadDst, UsageReadSrc
	}
	switch {
	case c == nil:
		return 0, errNil(op, "connection")
	case ctx == nil:
		return 0, errNil(op, "context")
	case n < 1 || n > MaxBatch:
		return 0, rpmaerr.Inval(op, "%d operations: a batch has 1 to %d", n, MaxBatch)
	}
	for i := range n {
		t := at(i)
		if err := c.checkTransfer(op, t.Local, t.LocalOff, lneed, t.Remote, t.RemoteOff, rneed, t.Len, rpma.CompletionAlways); err != nil {
			return 0, fmt.Errorf("operation %d of the batch: %w", i, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q := c.cq
	if q == nil || !q.enter() {
		return 0, errClosed(op, "connection")
	}
	defer q.exit()
	var (
		cls     [MaxBatch]*opClaim
		partErr error // why the rest failed, when part of the chain was posted
	)
	_, err = q.postClaimed(ctx, op, false, uint64(n), false, func(cl *opClaim) error {
		var perr error
		posted, perr = c.postBatch(op, read, n, at, cl, &cls)
		if posted > 0 {
			partErr = perr
			return nil // the posted part is the caller's
		}
		return perr
	})
	if err != nil {
		return 0, err
	}
	for i := range posted {
		out(i, Pending{q: q, cl: cls[i], gen: cls[i].gen.Load()})
	}
	if posted < n {
		return posted, fmt.Errorf("rpma: %s: the provider accepted %d of the batch's %d operations: %w", op, posted, n, partErr)
	}
	return posted, nil
}

// postBatch posts the batch as one chain, through the post protocol
// (post.go), each request with its claim (first for the first, the
// others from the pool), into cls; it returns how many the provider
// accepted.
func (c *Conn) postBatch(op string, read bool, n int, at func(i int) Transfer, first *opClaim, cls *[MaxBatch]*opClaim) (int, error) {
	d, err := c.lockData(op)
	if err != nil {
		return 0, err
	}
	sq, cq, qp := c.q.sq, c.q.cq, c.q.qp
	if uint64(n) > sq.depth {
		d.mu.Unlock()
		return 0, rpmaerr.Inval(op, "%d operations: more than the send queue's %d", n, sq.depth)
	}
	p, err := sq.open(uint64(n))
	if err != nil {
		d.stats.queueFull++
		d.mu.Unlock()
		return 0, err
	}
	if c.q.batch == nil {
		c.q.batch = make([]ibv.BatchWR, MaxBatch) // once per connection
	}
	wrs := c.q.batch[:n]
	sop, kind := ibv.OpRDMAWrite, statWrite
	if read {
		sop, kind = ibv.OpRDMARead, statRead
	}
	for i := range n {
		t := at(i)
		cl := first
		if i > 0 {
			cl = cq.newClaim(op)
		}
		cls[i] = cl
		sl, f := p.slot(uint64(i), true)
		*sl = wrSlot{user: true}
		p.claim(uint64(i), cl)
		laddr, lkey := t.Local.at(t.LocalOff)
		raddr, rkey := t.Remote.at(t.RemoteOff)
		wrs[i] = ibv.BatchWR{WRID: p.wrID(uint64(i)), Op: sop, Flags: f,
			LAddr: laddr, Len: uint32(t.Len), LKey: lkey, RAddr: raddr, RKey: rkey}
	}
	errno, posted, reaped := qp.PostBatch(wrs, cq.reap())
	if errno != 0 {
		// Those before the one the provider refused are posted, and
		// keep their slots and claims; the rest are rolled back.
		unsignaled := p.saved
		if posted > 0 {
			unsignaled = 0 // the posted ones were signaled
		}
		p.rollback(uint64(posted), uint64(n), unsignaled)
		for i := posted; i < n; i++ {
			*p.record(uint64(i)) = wrSlot{}
			if i > 0 { // first goes back to the caller
				cq.freeClaim(cls[i])
			}
			cls[i] = nil
		}
	}
	for i := range posted {
		d.posted(kind, uint64(at(i).Len))
	}
	cq.reaped(reaped)
	if errno != 0 {
		err = postError("ibv_post_send", errno, qp, c.q.state)
	}
	d.unlockAfterCrossing()
	return posted, err
}
