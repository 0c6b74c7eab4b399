package core

import (
	"encoding/binary"
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/internal/tsc"
	"github.com/gorpma/rpma/rpma"
)

// The data path. A post is one cgo crossing, which also reaps the CQ
// (see CQ.reapRoom); it takes one lock, the connection's data lock, under
// which the accounting is plain fields; it allocates nothing on success.
// Arguments pass a fast check first (checks.go); argument errors are
// built when they happen (they allocate); queue-full and broken-connection
// errors are prebuilt or built once.

// postKind selects the verbs call of postSend.
type postKind int

const (
	postPlain         postKind = iota // ibv_post_send of one work request
	postInline8                       // inline 8-byte RDMA write
	postAtomicWrite                   // ibv_wr_atomic_write
	postNativeFlush                   // ibv_wr_flush
	postEmulatedFlush                 // an 8-byte RDMA read into the flush buffer
	postRemoteAtomic                  // compare-and-swap or fetch-and-add
)

// sendArgs are the scalars of one send-queue work request.
type sendArgs struct {
	op     ibv.SendOp
	flags  uint32 // besides IBV_SEND_SIGNALED
	laddr  uint64
	length uint32
	lkey   uint32
	raddr  uint64
	rkey   uint32
	imm    uint32
	value  uint64 // atomic write; compare or add of a remote atomic
	swap   uint64 // compare-and-swap
	flen   uint64 // flush: the range's length (also emulated, for its counters)
	ftype  uint8
	stat   statKind // what the post counts as (stats.go)
}

// lockData takes c's data lock for a post. It fails, holding nothing,
// when c is nil, was never opened, is closed, or is broken.
func (c *Conn) lockData(op string) (*dataLock, error) {
	if c != nil && c.dl != nil {
		d := c.dl
		d.mu.Lock()
		if !d.closed && c.state.broken.Load() == nil {
			return d, nil
		}
		d.mu.Unlock()
	}
	return nil, c.lockDataErr(op)
}

// lockDataErr says why c's data lock cannot be taken for a post.
func (c *Conn) lockDataErr(op string) error {
	if c == nil {
		return errNil(op, "connection")
	}
	if err := c.usable(op); err != nil {
		return err
	}
	if err := c.state.err(); err != nil {
		return err
	}
	return errClosed(op, "connection")
}

// postSend posts one send-queue work request, accounted, and reaps: the
// post protocol (post.go), its eight steps in order. The busy poller's
// path runs in this one frame: the data lock, the slot and the reap's
// accounting are inline (lockData's, open's and unlockAfterCrossing's
// fast paths, and queuePost's methods), and a is read in place, so the
// arguments travel from the caller's frame to the crossing once.
func (c *Conn) postSend(op string, kind postKind, user bool, ctx uint64, a *sendArgs, cl *opClaim) error {
	if cl != nil && cl.combine && kind == postPlain && user && combinable(a.op) {
		return c.postCombined(op, ctx, a, false, cl)
	}
	if c == nil || c.dl == nil {
		return c.lockDataErr(op)
	}
	d := c.dl
	d.mu.Lock()
	if d.closed || c.state.broken.Load() != nil {
		d.mu.Unlock()
		return c.lockDataErr(op)
	}
	sq, cq, qp := c.q.sq, c.q.cq, c.q.qp
	s, ok := sq.tryReserve(1)
	if !ok {
		var err error
		if s, err = sq.reserveFull(1); err != nil {
			d.stats.queueFull++
			d.mu.Unlock()
			return err
		}
	}
	p := queuePost{q: sq, s: s, saved: sq.unsignaled} // open, its fast path inline
	sl, f := p.slot(0, user)
	*sl = wrSlot{ctx: ctx, user: user}
	flags := a.flags | f
	if cl != nil {
		p.claim(0, cl)
	}
	wrID := p.wrID(0)
	r := cq.reap()
	var (
		errno  syscall.Errno
		reaped int
	)
	switch kind {
	case postPlain:
		errno, reaped = qp.PostSend(wrID, a.op, flags, a.laddr, a.length, a.lkey, a.raddr, a.rkey, a.imm, r)
	case postEmulatedFlush:
		f := c.q.flush
		errno, reaped = qp.PostSend(wrID, ibv.OpRDMARead, flags, f.addr, 8, f.lkey, a.raddr, a.rkey, 0, r)
	case postInline8:
		errno, reaped = qp.PostInline8(wrID, flags, a.raddr, a.rkey, a.value, r)
	case postAtomicWrite:
		errno, reaped = qp.PostAtomicWrite(wrID, flags, a.raddr, a.rkey, a.value, r)
	case postNativeFlush:
		errno, reaped = qp.PostFlush(wrID, flags, a.raddr, a.rkey, a.flen, a.ftype, r)
	case postRemoteAtomic:
		errno, reaped = qp.PostAtomic(wrID, a.op, flags, a.laddr, a.lkey, a.raddr, a.rkey, a.value, a.swap, r)
	}
	if errno != 0 {
		p.rollback(0, 1, p.saved)
	}
	cq.reaped(reaped)
	var err error
	if errno != 0 {
		err = postError(postCall(kind == postAtomicWrite || kind == postNativeFlush), errno, qp, c.q.state)
	} else {
		d.posted(a.stat, uint64(a.length)+a.flen)
	}
	due := d.yieldDue(tsc.Read())
	d.mu.Unlock()
	if due {
		gosched()
	}
	return err
}

// Read mirrors rpma_read.
func (c *Conn) Read(dst *MR, dstOff int, src *RemoteMR, srcOff, n int, flags rpma.CompletionFlags, ctx uint64) error {
	return c.read("read", dst, dstOff, src, srcOff, n, flags, ctx, nil)
}

// read is Read, posted for cl when it is not nil (claim.go).
func (c *Conn) read(op string, dst *MR, dstOff int, src *RemoteMR, srcOff, n int, flags rpma.CompletionFlags, ctx uint64, cl *opClaim) error {
	if c == nil || !validFlags(flags) || !dst.fits(c.peer, UsageReadDst, dstOff, n) || !src.fits(UsageReadSrc, srcOff, n) {
		if err := c.checkTransfer(op, dst, dstOff, UsageReadDst, src, srcOff, UsageReadSrc, n, flags); err != nil {
			return err
		}
	}
	laddr, lkey := dst.at(dstOff)
	raddr, rkey := src.at(srcOff)
	return c.postSend(op, postPlain, signaled(flags), ctx, &sendArgs{op: ibv.OpRDMARead, laddr: laddr, length: uint32(n), lkey: lkey, raddr: raddr, rkey: rkey, stat: statRead}, cl)
}

// checkTransfer is the full check of a read or a write: a local region
// and a remote one (or neither, for 0 bytes), each with its usage.
func (c *Conn) checkTransfer(op string, local *MR, loff, lneed int, remote *RemoteMR, roff, rneed, n int, flags rpma.CompletionFlags) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if _, err := checkFlags(op, flags); err != nil {
		return err
	}
	if err := bothOrNeither(op, local, remote); err != nil {
		return err
	}
	if _, _, err := localRange(op, c.peer, local, lneed, loff, n); err != nil {
		return err
	}
	_, _, err := remoteRange(op, remote, rneed, roff, n)
	return err
}

// Write mirrors rpma_write.
func (c *Conn) Write(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, ctx uint64) error {
	return c.write("write", dst, dstOff, src, srcOff, n, flags, ctx, nil)
}

// write is Write, posted for cl when it is not nil.
func (c *Conn) write(op string, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, ctx uint64, cl *opClaim) error {
	if c == nil || !validFlags(flags) || !src.fits(c.peer, UsageWriteSrc, srcOff, n) || !dst.fits(UsageWriteDst, dstOff, n) {
		if err := c.checkTransfer(op, src, srcOff, UsageWriteSrc, dst, dstOff, UsageWriteDst, n, flags); err != nil {
			return err
		}
	}
	laddr, lkey := src.at(srcOff)
	raddr, rkey := dst.at(dstOff)
	return c.postSend(op, postPlain, signaled(flags), ctx, &sendArgs{op: ibv.OpRDMAWrite, laddr: laddr, length: uint32(n), lkey: lkey, raddr: raddr, rkey: rkey, stat: statWrite}, cl)
}

// WriteWithImm mirrors rpma_write_with_imm; imm is in host order.
func (c *Conn) WriteWithImm(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64) error {
	return c.writeWithImm("write_with_imm", dst, dstOff, src, srcOff, n, flags, imm, ctx, nil)
}

// writeWithImm is WriteWithImm, posted for cl when it is not nil.
func (c *Conn) writeWithImm(op string, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64, cl *opClaim) error {
	if c == nil || !validFlags(flags) || !src.fits(c.peer, UsageWriteSrc, srcOff, n) || !dst.fits(UsageWriteDst, dstOff, n) {
		if err := c.checkTransfer(op, src, srcOff, UsageWriteSrc, dst, dstOff, UsageWriteDst, n, flags); err != nil {
			return err
		}
	}
	laddr, lkey := src.at(srcOff)
	raddr, rkey := dst.at(dstOff)
	return c.postSend(op, postPlain, signaled(flags), ctx, &sendArgs{op: ibv.OpRDMAWriteWithImm, laddr: laddr, length: uint32(n), lkey: lkey, raddr: raddr, rkey: rkey, imm: imm, stat: statWriteWithImm}, cl)
}

// AtomicWrite is conn.Conn.AtomicWrite's core; see there.
func (c *Conn) AtomicWrite(dst *RemoteMR, dstOff int, src [8]byte, flags rpma.CompletionFlags, ctx uint64) error {
	return c.atomicWrite("atomic_write", dst, dstOff, src, flags, ctx, nil)
}

// atomicWrite is AtomicWrite, posted for cl when it is not nil.
func (c *Conn) atomicWrite(op string, dst *RemoteMR, dstOff int, src [8]byte, flags rpma.CompletionFlags, ctx uint64, cl *opClaim) error {
	const n = rpma.AtomicWriteAlignment
	if c == nil || !validFlags(flags) || dstOff%n != 0 || !dst.fits(UsageWriteDst, dstOff, n) || (dst.raddr+uint64(dstOff))%n != 0 {
		if err := c.checkAtomicWrite(op, dst, dstOff, flags); err != nil {
			return err
		}
	}
	raddr, rkey := dst.at(dstOff)
	kind := postInline8
	if c.nativeAtomicWrite {
		kind = postAtomicWrite
	}
	return c.postSend(op, kind, signaled(flags), ctx, &sendArgs{flags: ibv.SendFence, raddr: raddr, rkey: rkey, value: binary.NativeEndian.Uint64(src[:]), stat: statAtomicWrite}, cl)
}

func (c *Conn) checkAtomicWrite(op string, dst *RemoteMR, dstOff int, flags rpma.CompletionFlags) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if dst == nil {
		return rpmaerr.Inval(op, "no remote memory region")
	}
	if _, err := checkFlags(op, flags); err != nil {
		return err
	}
	return alignedRemoteWord(op, dst, dstOff, UsageWriteDst, rpma.AtomicWriteAlignment)
}

// alignedRemoteWord checks the n-byte word at off of dst for an operation
// that needs the usage need and n-byte alignment: off and the remote
// address must be multiples of n, and the word within dst.
func alignedRemoteWord(op string, dst *RemoteMR, off, need, n int) error {
	if dst == nil {
		return rpmaerr.Inval(op, "no remote memory region")
	}
	if off%n != 0 {
		return rpmaerr.Inval(op, "offset %d is not a multiple of %d", off, n)
	}
	raddr, _, err := remoteRange(op, dst, need, off, n)
	if err != nil {
		return err
	}
	if raddr%uint64(n) != 0 {
		return rpmaerr.Inval(op, "remote address 0x%x (region 0x%x + offset %d) is not %d-byte aligned", raddr, dst.raddr, off, n)
	}
	return nil
}

// Flush mirrors rpma_flush.
func (c *Conn) Flush(dst *RemoteMR, dstOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, ctx uint64) error {
	return c.flush("flush", dst, dstOff, n, typ, flags, ctx, nil)
}

// flush is Flush, posted for cl when it is not nil.
func (c *Conn) flush(op string, dst *RemoteMR, dstOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, ctx uint64, cl *opClaim) error {
	if c == nil || !validFlags(flags) || !c.flushFits(dst, dstOff, n, typ) {
		if err := c.checkFlush(op, dst, dstOff, n, typ, flags); err != nil {
			return err
		}
	}
	raddr, rkey := dst.at(dstOff)
	stat := flushStat(typ, false)
	if c.nativeFlush {
		return c.postSend(op, postNativeFlush, signaled(flags), ctx, &sendArgs{raddr: raddr, rkey: rkey, flen: uint64(n), ftype: flushPlacement(typ), stat: stat}, cl)
	}
	return c.postSend(op, postEmulatedFlush, signaled(flags), ctx, &sendArgs{raddr: raddr, rkey: rkey, flen: uint64(n), stat: stat}, cl)
}

func (c *Conn) checkFlush(op string, dst *RemoteMR, dstOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if dst == nil {
		return rpmaerr.Inval(op, "no remote memory region")
	}
	if _, err := checkFlags(op, flags); err != nil {
		return err
	}
	if err := c.flushAllowed(op, dst, typ); err != nil {
		return err
	}
	_, _, err := c.flushRange(op, dst, dstOff, n)
	return err
}

// WriteAndFlush is conn.Conn.WriteAndFlush's core (see there): one chain, one doorbell.
func (c *Conn) WriteAndFlush(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, ctx uint64) error {
	return c.writeAndFlush("write_and_flush", dst, dstOff, src, srcOff, n, typ, flags, ctx, nil)
}

// writeAndFlush is WriteAndFlush, posted for cl when it is not nil: both
// slots are claimed, and the flush's completion is cl's.
func (c *Conn) writeAndFlush(op string, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, ctx uint64, cl *opClaim) error {
	if c == nil || !validFlags(flags) || !src.fits(c.peer, UsageWriteSrc, srcOff, n) || !dst.fits(UsageWriteDst, dstOff, n) || !c.flushFits(dst, dstOff, n, typ) {
		if err := c.checkWriteAndFlush(op, dst, dstOff, src, srcOff, n, typ, flags); err != nil {
			return err
		}
	}
	if cl != nil && cl.combine && !c.nativeFlush && signaled(flags) {
		laddr, lkey := src.at(srcOff)
		raddr, rkey := dst.at(dstOff)
		return c.postCombined(op, ctx, &sendArgs{op: ibv.OpRDMAWrite, laddr: laddr, length: uint32(n), lkey: lkey, raddr: raddr, rkey: rkey, stat: flushStat(typ, true)}, true, cl)
	}
	d, err := c.lockData(op)
	if err != nil {
		return err
	}
	p, err := c.q.sq.open(2)
	if err != nil {
		d.stats.queueFull++
		d.mu.Unlock()
		return err
	}
	err = c.postWriteFlush(p, dst, dstOff, src, srcOff, n, typ, signaled(flags), ctx, cl)
	if err == nil {
		d.posted(flushStat(typ, true), uint64(n))
	}
	d.unlockAfterCrossing()
	return err
}

// postWriteFlush runs steps 3 to 7 of the post protocol (post.go) for
// the chain of WriteAndFlush, p (two slots, the data lock held). With a
// claim (claim.go) both slots are claimed and the flush's completion is
// the claim's.
func (c *Conn) postWriteFlush(p queuePost, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType, user bool, ctx uint64, cl *opClaim) error {
	sq, cq, qp := c.q.sq, c.q.cq, c.q.qp
	sl, f1 := p.slot(0, false)
	*sl = wrSlot{ctx: ctx}
	afterFirst := sq.unsignaled
	sl, f2 := p.slot(1, user)
	*sl = wrSlot{ctx: ctx, user: user}
	if cl != nil {
		p.claim(0, nil)
		p.claim(1, cl)
	}
	laddr, lkey := src.at(srcOff)
	raddr, rkey := dst.at(dstOff)
	r := cq.reap()
	var (
		errno  syscall.Errno
		posted int // of the two, on failure (the batch of the extended API is all or nothing)
		reaped int
	)
	if c.nativeFlush {
		errno, reaped = qp.PostWriteFlush(p.wrID(0), f1, laddr, uint32(n), lkey, raddr, rkey,
			p.wrID(1), f2, raddr, flushPlacement(typ), r)
	} else {
		fb := c.q.flush
		errno, posted, reaped = qp.PostWriteRead(p.wrID(0), f1, laddr, uint32(n), lkey, raddr, rkey,
			p.wrID(1), f2, fb.addr, fb.lkey, raddr, r)
	}
	if errno != 0 {
		// The provider rang the doorbell for what it accepted: only the
		// rest is rolled back. A posted write keeps its slot (a later
		// completion retires it) and completes only on error.
		if posted == 1 {
			p.rollback(1, 2, afterFirst)
		} else {
			p.rollback(0, 2, p.saved)
		}
	}
	cq.reaped(reaped)
	if errno != 0 {
		return postError(postCall(c.nativeFlush), errno, qp, c.q.state)
	}
	return nil
}

func (c *Conn) checkWriteAndFlush(op string, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if dst == nil || src == nil {
		return rpmaerr.Inval(op, "give both memory regions")
	}
	if _, err := checkFlags(op, flags); err != nil {
		return err
	}
	if err := c.flushAllowed(op, dst, typ); err != nil {
		return err
	}
	if dst.usage&UsageWriteDst == 0 {
		return rpmaerr.Inval(op, "the remote memory region's descriptor lacks mr.UsageWriteDst, which %s needs (the other side did not register it for that)", op)
	}
	if _, _, err := localRange(op, c.peer, src, UsageWriteSrc, srcOff, n); err != nil {
		return err
	}
	_, _, err := c.flushRange(op, dst, dstOff, n)
	return err
}

// Send mirrors rpma_send.
func (c *Conn) Send(src *MR, off, n int, flags rpma.CompletionFlags, ctx uint64) error {
	return c.send("send", ibv.OpSend, src, off, n, flags, 0, ctx, nil)
}

// SendWithImm mirrors rpma_send_with_imm; imm is in host order.
func (c *Conn) SendWithImm(src *MR, off, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64) error {
	return c.send("send_with_imm", ibv.OpSendWithImm, src, off, n, flags, imm, ctx, nil)
}

func (c *Conn) send(op string, sop ibv.SendOp, src *MR, off, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64, cl *opClaim) error {
	if c == nil || !validFlags(flags) || !src.fits(c.peer, UsageSend, off, n) {
		if err := c.checkSend(op, src, off, n, flags); err != nil {
			return err
		}
	}
	laddr, lkey := src.at(off)
	stat := statSend
	if sop == ibv.OpSendWithImm {
		stat = statSendWithImm
	}
	return c.postSend(op, postPlain, signaled(flags), ctx, &sendArgs{op: sop, laddr: laddr, length: uint32(n), lkey: lkey, imm: imm, stat: stat}, cl)
}

func (c *Conn) checkSend(op string, src *MR, off, n int, flags rpma.CompletionFlags) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if _, err := checkFlags(op, flags); err != nil {
		return err
	}
	_, _, err := localRange(op, c.peer, src, UsageSend, off, n)
	return err
}

// Recv mirrors rpma_recv.
func (c *Conn) Recv(dst *MR, off, n int, ctx uint64) error {
	return c.recv("recv", dst, off, n, ctx, nil)
}

// recv is Recv, posted for cl when it is not nil.
func (c *Conn) recv(op string, dst *MR, off, n int, ctx uint64, cl *opClaim) error {
	if c == nil || !dst.fits(c.peer, UsageRecv, off, n) {
		if err := c.usable(op); err != nil {
			return err
		}
		if _, _, err := localRange(op, c.peer, dst, UsageRecv, off, n); err != nil {
			return err
		}
	}
	d, err := c.lockData(op)
	if err != nil {
		return err
	}
	err = c.q.recv(op, dst, off, n, ctx, cl)
	d.unlockAfterCrossing()
	return err
}

// recv posts a receive on the QP's own receive queue (the data lock
// held): steps 2 to 7 of the post protocol (post.go), without a reap.
func (q *queues) recv(op string, dst *MR, off, n int, ctx uint64, cl *opClaim) error {
	rq := q.rq
	if rq == nil {
		return rpmaerr.Inval(op, "the connection receives through its SRQ: post receives with srq.SRQ.Recv")
	}
	p, err := rq.open(1)
	if err != nil {
		q.dl.stats.queueFull++
		return err
	}
	*p.record(0) = wrSlot{ctx: ctx, user: true}
	if cl != nil {
		p.claim(0, cl)
	}
	laddr, lkey := dst.at(off)
	if errno := q.qp.PostRecv(wrKindRQ|p.s, laddr, uint32(n), lkey); errno != 0 {
		p.rollback(0, 1, p.saved)
		if errno == syscall.ENOMEM || errno == syscall.ENOSPC {
			return errRQFull
		}
		return postError("ibv_post_recv", errno, q.qp, q.state)
	}
	q.dl.posted(statRecv, uint64(n))
	return nil
}

// Recv is conn.ConnReq.Recv's core; see there.
func (r *ConnReq) Recv(dst *MR, off, n int, ctx uint64) error {
	const op = "conn_req_recv"
	if r == nil {
		return errNil(op, "connection request")
	}
	if !r.enter() {
		return errClosed(op, "connection request")
	}
	defer r.exit()
	if _, _, err := localRange(op, r.peer, dst, UsageRecv, off, n); err != nil {
		return err
	}
	if err := r.queuesFor(op); err != nil {
		return err
	}
	d := r.q.dl
	d.mu.Lock()
	err := r.q.recv(op, dst, off, n, ctx, nil)
	d.mu.Unlock()
	return err
}
