package core

import (
	"context"
	"encoding/binary"
	"strconv"
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// The data path: one cgo crossing per post, no allocation on success.
// Argument errors are built when they happen (they allocate); queue-full
// and broken-connection errors are prebuilt or built once.

// checkFlags checks the completion flags of a data-path call: librpma
// requires them non-zero; only the RPMA_F_COMPLETION_* bits exist.
func checkFlags(op string, flags rpma.CompletionFlags) (user bool, err error) {
	if flags <= 0 || flags > rpma.CompletionAlways {
		return false, rpma.Inval(op, "completion flags %d: want rpma.CompletionOnError or rpma.CompletionAlways", int(flags))
	}
	// RPMA_F_COMPLETION_ON_SUCCESS = ALWAYS & ~ON_ERROR asks for a
	// signaled work request.
	return flags&(rpma.CompletionAlways&^rpma.CompletionOnError) != 0, nil
}

// localRange checks a local region for an operation of p's that needs
// the usage bit need, and [off, off+n) of it, and returns its address and
// key. A nil m stands for no memory (0-byte operations): off and n must
// be 0. The region must belong to p (its protection domain: the device
// refuses another's lkey, and breaks the connection for it) and have the
// usage (librpma does not check it; a receive buffer posted as a send
// source would go out).
func localRange(op string, p *Peer, m *MR, need, off, n int) (uint64, uint32, error) {
	if m == nil {
		if off != 0 || n != 0 {
			return 0, 0, rpma.Inval(op, "no local memory region: offset and length must be 0")
		}
		return 0, 0, nil
	}
	if m.closed() {
		return 0, 0, errClosed(op, "memory region")
	}
	if m.peer != p {
		return 0, 0, rpma.Inval(op, "the local memory region was registered on another peer (protection domain)")
	}
	if m.usage&need == 0 {
		return 0, 0, rpma.Inval(op, "the local memory region was registered without %s, which %s needs", usageName(need), op)
	}
	if err := checkRange(op, "local memory region", off, n, m.size); err != nil {
		return 0, 0, err
	}
	return m.addr + uint64(off), m.lkey, nil
}

// remoteRange checks [off, off+n) of a remote region whose descriptor must
// have one of the usage bits need (0: any), and returns its address and
// key; nil as for localRange.
func remoteRange(op string, r *RemoteMR, need, off, n int) (uint64, uint32, error) {
	if r == nil {
		if off != 0 || n != 0 {
			return 0, 0, rpma.Inval(op, "no remote memory region: offset and length must be 0")
		}
		return 0, 0, nil
	}
	if need != 0 && r.usage&need == 0 {
		return 0, 0, rpma.Inval(op, "the remote memory region's descriptor lacks %s, which %s needs (the other side did not register it for that)", usageName(need), op)
	}
	if err := checkRange(op, "remote memory region", off, n, r.size); err != nil {
		return 0, 0, err
	}
	return r.raddr + uint64(off), r.rkey, nil
}

// usageName names a usage bit as package mr exports it.
func usageName(u int) string {
	switch u {
	case UsageReadSrc:
		return "mr.UsageReadSrc"
	case UsageReadDst:
		return "mr.UsageReadDst"
	case UsageWriteSrc:
		return "mr.UsageWriteSrc"
	case UsageWriteDst:
		return "mr.UsageWriteDst"
	case UsageFlushVisibility:
		return "mr.UsageFlushVisibility"
	case UsageFlushPersistent:
		return "mr.UsageFlushPersistent"
	case UsageSend:
		return "mr.UsageSend"
	case UsageRecv:
		return "mr.UsageRecv"
	}
	return "usage 0x" + strconv.FormatInt(int64(u), 16)
}

// bothOrNeither is librpma's rule for read and write: both regions, or
// neither (a 0-byte operation).
func bothOrNeither(op string, local *MR, remote *RemoteMR) error {
	if (local == nil) != (remote == nil) {
		return rpma.Inval(op, "give both memory regions, or neither for a 0-byte operation")
	}
	return nil
}

// postError turns the errno of a failed post into an error: a full queue
// in the provider's view (ENOMEM from ibv_post_send, ENOSPC from the
// extended API's ibv_wr_complete, as rxe returns them) is
// rpma.ErrQueueFull; a QP in the error state marks the connection broken.
func postError(call string, errno syscall.Errno, qp *ibv.QP, st *qpState) error {
	if errno == syscall.ENOMEM || errno == syscall.ENOSPC {
		return errSQFull
	}
	if qp != nil && st != nil {
		if s, err := qp.State(); err == nil && s == ibv.QPStateErr {
			st.breakWith(rpma.Provider(call, errno))
			return st.err()
		}
	}
	return rpma.Provider(call, errno)
}

// postKind selects the verbs call of postSend.
type postKind int

const (
	postPlain       postKind = iota // ibv_post_send of one work request
	postInline8                     // inline 8-byte RDMA write
	postAtomicWrite                 // ibv_wr_atomic_write
	postNativeFlush                 // ibv_wr_flush
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
	value  uint64 // atomic write
	flen   uint64 // native flush
	ftype  uint8
}

// enterData starts a data-path operation on c.
func (c *Conn) enterData(op string) error {
	if c == nil {
		return errNil(op, "connection")
	}
	if !c.enter() {
		return errClosed(op, "connection")
	}
	if err := c.state.err(); err != nil {
		c.exit()
		return err
	}
	return nil
}

// postSend posts one send-queue work request, accounted.
func (c *Conn) postSend(kind postKind, user bool, ctx uint64, a sendArgs) error {
	sq := c.q.sq
	sq.mu.Lock()
	s, err := sq.reserve(1)
	if err != nil {
		sq.mu.Unlock()
		return err
	}
	saved := sq.unsignaled
	flags := a.flags
	if sq.signal(user) {
		flags |= ibv.SendSignaled
	}
	sq.set(s, ctx, user)
	sq.commit(s + 1)
	wrID := wrKindSQ | s
	var errno syscall.Errno
	qp := c.q.qp
	switch kind {
	case postPlain:
		errno = qp.PostSend(wrID, a.op, flags, a.laddr, a.length, a.lkey, a.raddr, a.rkey, a.imm)
	case postInline8:
		errno = qp.PostInline8(wrID, flags, a.raddr, a.rkey, a.value)
	case postAtomicWrite:
		errno = qp.PostAtomicWrite(wrID, flags, a.raddr, a.rkey, a.value)
	case postNativeFlush:
		errno = qp.PostFlush(wrID, flags, a.raddr, a.rkey, a.flen, a.ftype)
	}
	if errno != 0 {
		sq.rollback(s, 1, saved)
		sq.mu.Unlock()
		return postError("ibv_post_send", errno, qp, c.q.state)
	}
	sq.mu.Unlock()
	return nil
}

// Read mirrors rpma_read.
func (c *Conn) Read(dst *MR, dstOff int, src *RemoteMR, srcOff, n int, flags rpma.CompletionFlags, ctx uint64) error {
	const op = "read"
	user, err := checkFlags(op, flags)
	if err != nil {
		return err
	}
	if err := bothOrNeither(op, dst, src); err != nil {
		return err
	}
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	laddr, lkey, err := localRange(op, c.peer, dst, UsageReadDst, dstOff, n)
	if err != nil {
		return err
	}
	raddr, rkey, err := remoteRange(op, src, UsageReadSrc, srcOff, n)
	if err != nil {
		return err
	}
	return c.postSend(postPlain, user, ctx, sendArgs{op: ibv.OpRDMARead, laddr: laddr, length: uint32(n), lkey: lkey, raddr: raddr, rkey: rkey})
}

// Write mirrors rpma_write.
func (c *Conn) Write(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, ctx uint64) error {
	return c.write("write", ibv.OpRDMAWrite, dst, dstOff, src, srcOff, n, flags, 0, ctx)
}

// WriteWithImm mirrors rpma_write_with_imm; imm is in host order.
func (c *Conn) WriteWithImm(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64) error {
	return c.write("write_with_imm", ibv.OpRDMAWriteWithImm, dst, dstOff, src, srcOff, n, flags, imm, ctx)
}

func (c *Conn) write(op string, wop ibv.SendOp, dst *RemoteMR, dstOff int, src *MR, srcOff, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64) error {
	user, err := checkFlags(op, flags)
	if err != nil {
		return err
	}
	if err := bothOrNeither(op, src, dst); err != nil {
		return err
	}
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	laddr, lkey, err := localRange(op, c.peer, src, UsageWriteSrc, srcOff, n)
	if err != nil {
		return err
	}
	raddr, rkey, err := remoteRange(op, dst, UsageWriteDst, dstOff, n)
	if err != nil {
		return err
	}
	return c.postSend(postPlain, user, ctx, sendArgs{op: wop, laddr: laddr, length: uint32(n), lkey: lkey, raddr: raddr, rkey: rkey, imm: imm})
}

// AtomicWrite mirrors rpma_atomic_write: 8 bytes, natively
// (ibv_wr_atomic_write) when the QP can, else as an inline RDMA write;
// fenced either way, so that it follows earlier flushes (reads).
func (c *Conn) AtomicWrite(dst *RemoteMR, dstOff int, src [8]byte, flags rpma.CompletionFlags, ctx uint64) error {
	const op = "atomic_write"
	if dst == nil {
		return rpma.Inval(op, "no remote memory region")
	}
	user, err := checkFlags(op, flags)
	if err != nil {
		return err
	}
	if dstOff%rpma.AtomicWriteAlignment != 0 {
		return rpma.Inval(op, "offset %d is not a multiple of %d", dstOff, rpma.AtomicWriteAlignment)
	}
	raddr, rkey, err := remoteRange(op, dst, UsageWriteDst, dstOff, rpma.AtomicWriteAlignment)
	if err != nil {
		return err
	}
	if raddr%rpma.AtomicWriteAlignment != 0 {
		return rpma.Inval(op, "remote address 0x%x (region 0x%x + offset %d) is not 8-byte aligned", raddr, dst.raddr, dstOff)
	}
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	kind := postInline8
	if c.nativeAtomicWrite {
		kind = postAtomicWrite
	}
	return c.postSend(kind, user, ctx, sendArgs{flags: ibv.SendFence, raddr: raddr, rkey: rkey, value: binary.NativeEndian.Uint64(src[:])})
}

// flushAllowed is librpma's rule for rpma_flush: PERSISTENT needs the
// applied remote peer configuration (direct write to PMem) and the remote
// region's FLUSH_TYPE_PERSISTENT usage; VISIBILITY needs its
// FLUSH_TYPE_VISIBILITY usage.
func (c *Conn) flushAllowed(op string, dst *RemoteMR, typ rpma.FlushType) error {
	switch typ {
	case rpma.FlushPersistent:
		if !c.directWriteToPMem.Load() {
			return rpma.NoSupp(op, "Connection does not support flush to persistency. Check if the remote node supports direct write to persistent memory.")
		}
		if dst.usage&UsageFlushPersistent == 0 {
			return rpma.NoSupp(op, "The remote memory region does not support flushing to persistency")
		}
	case rpma.FlushVisibility:
		if dst.usage&UsageFlushVisibility == 0 {
			return rpma.NoSupp(op, "The remote memory region does not support flushing to global visibility")
		}
	default:
		return rpma.Inval(op, "unknown flush type %d", int(typ))
	}
	return nil
}

// flushRange checks the flushed range and, for the emulated flush, the
// 8-byte read at its start.
func (c *Conn) flushRange(op string, dst *RemoteMR, off, n int) (uint64, uint32, error) {
	raddr, rkey, err := remoteRange(op, dst, 0, off, n)
	if err != nil {
		return 0, 0, err
	}
	if !c.nativeFlush {
		if _, _, err := remoteRange(op, dst, 0, off, 8); err != nil {
			return 0, 0, rpma.Inval(op, "the emulated flush reads 8 bytes at offset %d, outside the remote region of %d bytes", off, dst.size)
		}
	}
	return raddr, rkey, nil
}

func flushPlacement(typ rpma.FlushType) uint8 {
	if typ == rpma.FlushPersistent {
		return ibv.FlushPersistent
	}
	return ibv.FlushGlobal
}

// Flush mirrors rpma_flush.
func (c *Conn) Flush(dst *RemoteMR, dstOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, ctx uint64) error {
	const op = "flush"
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	if dst == nil {
		return rpma.Inval(op, "no remote memory region")
	}
	user, err := checkFlags(op, flags)
	if err != nil {
		return err
	}
	if err := c.flushAllowed(op, dst, typ); err != nil {
		return err
	}
	raddr, rkey, err := c.flushRange(op, dst, dstOff, n)
	if err != nil {
		return err
	}
	if c.q.nativeFlush {
		return c.postSend(postNativeFlush, user, ctx, sendArgs{raddr: raddr, rkey: rkey, flen: uint64(n), ftype: flushPlacement(typ)})
	}
	f := c.q.flush
	return c.postSend(postPlain, user, ctx, sendArgs{op: ibv.OpRDMARead, laddr: f.addr, length: 8, lkey: f.lkey, raddr: raddr, rkey: rkey})
}

// WriteAndFlush posts a write (unsignaled: it completes only on error)
// and the flush of the written range as one chain: one crossing, one
// doorbell. Both carry ctx.
func (c *Conn) WriteAndFlush(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, ctx uint64) error {
	const op = "write_and_flush"
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	if dst == nil || src == nil {
		return rpma.Inval(op, "give both memory regions")
	}
	user, err := checkFlags(op, flags)
	if err != nil {
		return err
	}
	if err := c.flushAllowed(op, dst, typ); err != nil {
		return err
	}
	if dst.usage&UsageWriteDst == 0 {
		return rpma.Inval(op, "the remote memory region's descriptor lacks mr.UsageWriteDst, which %s needs (the other side did not register it for that)", op)
	}
	laddr, lkey, err := localRange(op, c.peer, src, UsageWriteSrc, srcOff, n)
	if err != nil {
		return err
	}
	raddr, rkey, err := c.flushRange(op, dst, dstOff, n)
	if err != nil {
		return err
	}
	sq := c.q.sq
	sq.mu.Lock()
	s, err := sq.reserve(2)
	if err != nil {
		sq.mu.Unlock()
		return err
	}
	saved := sq.unsignaled
	var f1, f2 uint32
	if sq.signal(false) {
		f1 = ibv.SendSignaled
	}
	afterFirst := sq.unsignaled
	if sq.signal(user) {
		f2 = ibv.SendSignaled
	}
	sq.set(s, ctx, false)
	sq.set(s+1, ctx, user)
	sq.commit(s + 2)
	var (
		errno  syscall.Errno
		posted int // of the two, on failure (the batch of the extended API is all or nothing)
	)
	if c.q.nativeFlush {
		errno = c.q.qp.PostWriteFlush(wrKindSQ|s, f1, laddr, uint32(n), lkey, raddr, rkey,
			wrKindSQ|(s+1), f2, raddr, flushPlacement(typ))
	} else {
		fb := c.q.flush
		errno, posted = c.q.qp.PostWriteRead(wrKindSQ|s, f1, laddr, uint32(n), lkey, raddr, rkey,
			wrKindSQ|(s+1), f2, fb.addr, fb.lkey, raddr)
	}
	if errno != 0 {
		// The provider rang the doorbell for what it accepted: only the
		// rest is rolled back. A posted write keeps its slot (a later
		// completion retires it) and completes only on error.
		if posted == 1 {
			sq.rollback(s+1, 1, afterFirst)
		} else {
			sq.rollback(s, 2, saved)
		}
		sq.mu.Unlock()
		return postError("ibv_post_send", errno, c.q.qp, c.q.state)
	}
	sq.mu.Unlock()
	return nil
}

// Send mirrors rpma_send.
func (c *Conn) Send(src *MR, off, n int, flags rpma.CompletionFlags, ctx uint64) error {
	return c.send("send", ibv.OpSend, src, off, n, flags, 0, ctx)
}

// SendWithImm mirrors rpma_send_with_imm; imm is in host order.
func (c *Conn) SendWithImm(src *MR, off, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64) error {
	return c.send("send_with_imm", ibv.OpSendWithImm, src, off, n, flags, imm, ctx)
}

func (c *Conn) send(op string, sop ibv.SendOp, src *MR, off, n int, flags rpma.CompletionFlags, imm uint32, ctx uint64) error {
	user, err := checkFlags(op, flags)
	if err != nil {
		return err
	}
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	laddr, lkey, err := localRange(op, c.peer, src, UsageSend, off, n)
	if err != nil {
		return err
	}
	return c.postSend(postPlain, user, ctx, sendArgs{op: sop, laddr: laddr, length: uint32(n), lkey: lkey, imm: imm})
}

// Recv mirrors rpma_recv.
func (c *Conn) Recv(dst *MR, off, n int, ctx uint64) error {
	const op = "recv"
	if err := c.enterData(op); err != nil {
		return err
	}
	defer c.exit()
	laddr, lkey, err := localRange(op, c.peer, dst, UsageRecv, off, n)
	if err != nil {
		return err
	}
	return c.q.recv(op, laddr, uint32(n), lkey, ctx)
}

// recv posts a receive on the QP's own receive queue, accounted.
func (q *queues) recv(op string, laddr uint64, n, lkey uint32, ctx uint64) error {
	rq := q.rq
	if rq == nil {
		return rpma.Inval(op, "the connection receives through its SRQ: post receives with srq.SRQ.Recv")
	}
	rq.mu.Lock()
	s, err := rq.reserve(1)
	if err != nil {
		rq.mu.Unlock()
		return err
	}
	rq.set(s, ctx, true)
	rq.commit(s + 1)
	if errno := q.qp.PostRecv(wrKindRQ|s, laddr, n, lkey); errno != 0 {
		rq.rollback(s, 1, 0)
		rq.mu.Unlock()
		if errno == syscall.ENOMEM || errno == syscall.ENOSPC {
			return errRQFull
		}
		return postError("ibv_post_recv", errno, q.qp, q.state)
	}
	rq.mu.Unlock()
	return nil
}

// Recv mirrors rpma_conn_req_recv: a receive posted before the connection
// exists.
func (r *ConnReq) Recv(dst *MR, off, n int, ctx uint64) error {
	const op = "conn_req_recv"
	if r == nil {
		return errNil(op, "connection request")
	}
	if !r.enter() {
		return errClosed(op, "connection request")
	}
	defer r.exit()
	laddr, lkey, err := localRange(op, r.peer, dst, UsageRecv, off, n)
	if err != nil {
		return err
	}
	return r.q.recv(op, laddr, uint32(n), lkey, ctx)
}

// Wait mirrors rpma_conn_wait: with a shared completion channel, it waits
// for the next completion event, acknowledges it, re-arms the CQ it
// belongs to and returns that CQ and whether it is the receive CQ. Like
// CQ.Wait it is a broadcast wait, and it ends with a *rpma.ConnEventError
// once the connection is closed or lost.
func (c *Conn) Wait(ctx context.Context) (*CQ, bool, error) {
	const op = "conn_wait"
	if c == nil {
		return nil, false, errNil(op, "connection")
	}
	if ctx == nil {
		return nil, false, errNil(op, "context")
	}
	if !c.enter() {
		return nil, false, errClosed(op, "connection")
	}
	defer c.exit()
	if c.q.shared == nil {
		return nil, false, errNotShared
	}
	q, err := c.q.shared.wait(ctx, op)
	return c.cqResult(q, err)
}

// TryWait is Wait that does not block: with no completion event pending
// and nothing reaped, it returns an error matching rpma.ErrNoCompletion
// (rpma_conn_wait on a non-blocking channel).
func (c *Conn) TryWait() (*CQ, bool, error) {
	const op = "conn_wait"
	if c == nil {
		return nil, false, errNil(op, "connection")
	}
	if !c.enter() {
		return nil, false, errClosed(op, "connection")
	}
	defer c.exit()
	s := c.q.shared
	if s == nil {
		return nil, false, errNotShared
	}
	if q := s.pending(); q != nil {
		return c.cqResult(q, nil)
	}
	if !s.w.tryTurn() {
		return nil, false, errNoSharedCompletionYet
	}
	q, done, err := s.tryOnce(op)
	s.w.release()
	if !done {
		return nil, false, errNoSharedCompletionYet
	}
	return c.cqResult(q, err)
}

var (
	errNotShared             = rpma.NewError("conn_wait", rpma.CodeNotSharedChnl, 0, "use cq.CQ.Wait")
	errNoSharedCompletionYet = rpma.NewError("conn_wait", rpma.CodeNoCompletion, 0, "no completion event pending")
)

func (c *Conn) cqResult(q *CQ, err error) (*CQ, bool, error) {
	if err != nil {
		return nil, false, err
	}
	return q, q == c.q.rcq, nil
}

// NativeAtomicWrite reports whether the connection's atomic writes are
// native (ibv_wr_atomic_write).
func (c *Conn) NativeAtomicWrite() bool { return c != nil && c.nativeAtomicWrite }

// NativeFlush reports whether the connection's flushes are native
// (ibv_wr_flush).
func (c *Conn) NativeFlush() bool { return c != nil && c.nativeFlush }

// SRQ returns the shared receive queue the connection receives through,
// nil if none.
func (c *Conn) SRQ() *SRQ {
	if c == nil {
		return nil
	}
	return c.srq
}

// Broken returns the error posts get once the connection is broken (a
// failed completion, a post on a QP in the error state, or a terminal
// connection event), nil while it works.
func (c *Conn) Broken() error {
	const op = "conn_broken"
	switch {
	case c == nil:
		return errNil(op, "connection")
	case c.closed():
		return errClosed(op, "connection")
	}
	return c.state.err()
}

// GetComp is GetSendComp (recv false) and GetRecvComp (recv true), as
// librdmacm's rdma_get_send_comp and rdma_get_recv_comp: it returns
// exactly one completion of the connection's CQ (send) or receive CQ,
// polling first, else waiting (re-armed, then polled again), so that no
// completion is missed and spurious wake-ups are absorbed.
func (c *Conn) GetComp(ctx context.Context, recv bool) (WC, error) {
	op := "get_send_comp"
	if recv {
		op = "get_recv_comp"
	}
	if c == nil {
		return WC{}, errNil(op, "connection")
	}
	if ctx == nil {
		return WC{}, errNil(op, "context")
	}
	if !c.enter() {
		return WC{}, errClosed(op, "connection")
	}
	defer c.exit()
	srqRCQ := c.srq != nil && c.srq.rcq != nil
	q := c.cq
	switch {
	case recv && c.rcq == nil:
		return WC{}, rpma.Inval(op, "the connection has no receive CQ of its own (Config.RCQSize is 0): receive and send completions share the CQ")
	case recv && srqRCQ:
		return WC{}, rpma.Inval(op, "the connection's receives complete on its SRQ's receive CQ")
	case !recv && c.rcq == nil && !srqRCQ:
		return WC{}, rpma.Inval(op, "send and receive completions share the CQ (Config.RCQSize is 0): separate CQs are needed")
	case recv:
		q = c.rcq
	}
	var wc [1]WC
	for {
		n, err := q.GetWC(wc[:])
		if n == 1 {
			return wc[0], wc[0].Err()
		}
		if err != rpma.ErrNoCompletion {
			return WC{}, err
		}
		if c.q.shared != nil {
			_, err = c.q.shared.wait(ctx, op)
		} else {
			err = q.wait(ctx, op)
		}
		if err != nil {
			return WC{}, err
		}
	}
}
