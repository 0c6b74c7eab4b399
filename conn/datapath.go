package conn

import (
	"context"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

func local(m *mr.Local) *core.MR         { return (*core.MR)(m) }
func remote(r *mr.Remote) *core.RemoteMR { return (*core.RemoteMR)(r) }

// Read mirrors rpma_read: it posts an RDMA read of n bytes from src at
// srcOff into dst at dstOff. dst needs mr.UsageReadDst, src
// mr.UsageReadSrc. nil regions with offsets and n 0 post a 0-byte read.
//
// flags say whether the operation completes on the CQ always
// ([rpma.CompletionAlways]) or only on error ([rpma.CompletionOnError]);
// opContext comes back in the completion's OpContext.
//
// Checks before posting (errors matching [rpma.ErrInvalidArgument], never
// a remote access error): flags, one region given without the other,
// negative offsets, and [off, off+n) outside either region (the remote
// region's size comes from its descriptor). See the package
// documentation for queue accounting ([rpma.ErrQueueFull]) and broken
// connections ([rpma.ErrConnBroken]).
func (c *Conn) Read(dst *mr.Local, dstOff int, src *mr.Remote, srcOff, n int, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().Read(local(dst), dstOff, remote(src), srcOff, n, flags, opContext)
}

// Write mirrors rpma_write: it posts an RDMA write of n bytes from src at
// srcOff to dst at dstOff. src needs mr.UsageWriteSrc, dst
// mr.UsageWriteDst. Arguments and errors as for [Conn.Read].
//
// A write posted with [rpma.CompletionOnError] is unsignaled; its queue
// slot is retired by the next signaled completion the CQ delivers. So
// that long runs of unsignaled operations cannot fill the send queue
// with slots nothing would retire, every (SQSize/2)-th consecutive
// unsignaled operation is posted signaled; its completion is absorbed by
// GetWC (it retires slots but is not returned).
func (c *Conn) Write(dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().Write(remote(dst), dstOff, local(src), srcOff, n, flags, opContext)
}

// WriteWithImm mirrors rpma_write_with_imm: Write carrying the immediate
// value imm (host order), which consumes a receive on the other side and
// appears there in a completion with opcode rpma.WCRecvRDMAWithImm and
// cq.WithImm set.
func (c *Conn) WriteWithImm(dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int, flags rpma.CompletionFlags, imm uint32, opContext uint64) error {
	return c.core().WriteWithImm(remote(dst), dstOff, local(src), srcOff, n, flags, imm, opContext)
}

// AtomicWrite mirrors rpma_atomic_write: it writes the 8 bytes of src to
// dst at dstOff atomically. dstOff, and the remote address (the region's
// address plus dstOff), must be multiples of [rpma.AtomicWriteAlignment]
// (else an error matching [rpma.ErrInvalidArgument], before posting).
//
// When the QP supports it (Conn.NativeAtomicWrite: Linux 6.2+ rxe, or
// hardware with IB_UVERBS_DEVICE_ATOMIC_WRITE) it is a native
// ibv_wr_atomic_write; otherwise an inline 8-byte RDMA write, which
// relies on aligned 8-byte writes not being split. Either way it is
// fenced (IBV_SEND_FENCE), so it is ordered after earlier flushes, the
// pattern "write data, flush, atomic-write a pointer, flush". dst needs
// mr.UsageWriteDst.
func (c *Conn) AtomicWrite(dst *mr.Remote, dstOff int, src [8]byte, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().AtomicWrite(remote(dst), dstOff, src, flags, opContext)
}

// CompareAndSwap compares the 8-byte word at dstOff of dst with compare
// and, when they are equal, replaces it with swap, atomically
// (IBV_WR_ATOMIC_CMP_AND_SWP); librpma has no such call. The word's old
// value, whether or not it was swapped, lands in the 8 bytes at
// resultOff of result, written by the device: they belong to the device
// from the call until the operation's completion, and hold the old value
// in the host's byte order once it has completed successfully (with
// [rpma.CompletionOnError] only a later signaled completion of this
// connection's send queue shows that). The swap happened exactly when
// that value equals compare.
//
// dst needs [mr.UsageAtomicDst], known from the other side's
// [mr.Local.ExtendedDescriptor] (a region of a C librpma peer never has
// it); result needs [mr.UsageReadDst] and must be of this connection's
// peer; dstOff and the remote address must be multiples of 8. Each is an
// error matching [rpma.ErrInvalidArgument] before anything is posted; a
// device without atomics (atomic_cap IBV_ATOMIC_NONE) gives one matching
// [rpma.ErrNotSupported].
//
// Atomic against what: rxe (IBV_ATOMIC_HCA) and most devices make remote
// atomics atomic only against the other remote atomics through the same
// device, not against the other side's CPU, RDMA writes or AtomicWrite to
// the same word. Like a write, the new value is durable only after a
// Flush of the word.
func (c *Conn) CompareAndSwap(dst *mr.Remote, dstOff int, result *mr.Local, resultOff int, compare, swap uint64, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().CompareAndSwap(remote(dst), dstOff, local(result), resultOff, compare, swap, flags, opContext)
}

// FetchAndAdd adds add to the 8-byte word at dstOff of dst, atomically
// (IBV_WR_ATOMIC_FETCH_AND_ADD), wrapping around at 2^64; librpma has no
// such call. The word's old value lands at resultOff of result; the
// requirements, errors and guarantees are those of [Conn.CompareAndSwap].
func (c *Conn) FetchAndAdd(dst *mr.Remote, dstOff int, result *mr.Local, resultOff int, add uint64, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().FetchAndAdd(remote(dst), dstOff, local(result), resultOff, add, flags, opContext)
}

// Flush mirrors rpma_flush: it makes the bytes written to dst at
// [dstOff, dstOff+n) visible (typ [rpma.FlushVisibility]) or persistent
// ([rpma.FlushPersistent]) on the other side, as librpma decides:
//
//   - FlushPersistent needs the other side's peer configuration applied
//     with DirectWriteToPMem ([Conn.ApplyRemotePeerCfg]) and dst
//     registered with mr.UsageFlushPersistent;
//   - FlushVisibility needs dst registered with mr.UsageFlushVisibility;
//   - otherwise the error matches [rpma.ErrNotSupported].
//
// With native flush (Conn.NativeFlush: rdma-core 45+ built with the
// rpma_native_flush tag, and a capable device) it is ibv_wr_flush of the
// range. Otherwise it is librpma's emulation: an 8-byte RDMA read from
// dst at dstOff into an internal buffer; RC ordering completes it after
// the earlier writes are placed (and, with direct write to PMem,
// persistent). The read must lie within dst: dstOff+8 beyond the region
// is an invalid argument. Its completion has opcode rpma.WCRDMARead.
func (c *Conn) Flush(dst *mr.Remote, dstOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().Flush(remote(dst), dstOff, n, typ, flags, opContext)
}

// WriteAndFlush posts Write(dst, dstOff, src, srcOff, n,
// rpma.CompletionOnError, opContext) and Flush(dst, dstOff, n, typ,
// flags, opContext) as one chain: one cgo crossing and one doorbell for
// the common "write, then make it durable" pair. The checks of both
// apply before anything is posted; the pair takes two send-queue slots.
func (c *Conn) WriteAndFlush(dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int, typ rpma.FlushType, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().WriteAndFlush(remote(dst), dstOff, local(src), srcOff, n, typ, flags, opContext)
}

// Send mirrors rpma_send: it sends n bytes of src at off (mr.UsageSend)
// to a receive posted on the other side. nil src with off and n 0 sends
// an empty message.
func (c *Conn) Send(src *mr.Local, off, n int, flags rpma.CompletionFlags, opContext uint64) error {
	return c.core().Send(local(src), off, n, flags, opContext)
}

// SendWithImm mirrors rpma_send_with_imm: Send carrying imm (host order);
// the receiver's completion has cq.WithImm set and WC.Imm == imm.
func (c *Conn) SendWithImm(src *mr.Local, off, n int, flags rpma.CompletionFlags, imm uint32, opContext uint64) error {
	return c.core().SendWithImm(local(src), off, n, flags, imm, opContext)
}

// Recv mirrors rpma_recv: it posts a receive of up to n bytes into dst at
// off (mr.UsageRecv). Posted receives are an unordered set, as in
// librpma. A connection that receives through an SRQ (Config.SRQ) posts
// with srq.SRQ.Recv instead (this is an invalid argument).
func (c *Conn) Recv(dst *mr.Local, off, n int, opContext uint64) error {
	return c.core().Recv(local(dst), off, n, opContext)
}

// Recv mirrors rpma_conn_req_recv: it posts a receive before the
// connection exists, so that a message (or write with immediate) the
// other side sends right after establishment has somewhere to go. It
// counts against Config.RQSize like Conn.Recv.
func (r *ConnReq) Recv(dst *mr.Local, off, n int, opContext uint64) error {
	return r.core().Recv(local(dst), off, n, opContext)
}

// CompFD mirrors rpma_conn_get_compl_fd: the fd of the shared completion
// channel (Config.SharedCompChannel), non-blocking. Without a shared
// channel it returns -1 and an error matching [rpma.ErrNotSharedChannel].
func (c *Conn) CompFD() (int, error) { return c.core().CompFD() }

// Wait mirrors rpma_conn_wait: with a shared completion channel
// (Config.SharedCompChannel), it waits for the next completion event of
// either CQ, acknowledges it, re-arms that CQ and returns it, with isRCQ
// telling whether it is the receive CQ. Drain the returned CQ with GetWC.
// Without a shared channel the error matches [rpma.ErrNotSharedChannel]
// (use cq.CQ.Wait).
//
// Like cq.CQ.Wait, it parks in the runtime poller, honours ctx, follows
// the wait contract of package cq (several goroutines may wait at once,
// each with its own context; an event wakes them all: those that did not
// read it themselves return its CQ) and watches the connection's events:
// a closed or lost connection ends it with a *rpma.ConnEventError.
func (c *Conn) Wait(ctx context.Context) (q *cq.CQ, isRCQ bool, err error) {
	x, isRCQ, err := c.core().Wait(ctx)
	if x == nil {
		return nil, false, err
	}
	return (*cq.CQ)(x), isRCQ, err
}

// TryWait is Wait that does not block, for event loops (rpma_conn_wait on
// a non-blocking channel): with no completion event pending (and nothing
// reaped) it returns an error matching [rpma.ErrNoCompletion]. An event it
// reads is acknowledged and its CQ re-armed, so [Conn.CompFD] stops being
// readable. While another goroutine is blocked in Wait on the same
// channel, TryWait leaves pending events to it.
func (c *Conn) TryWait() (q *cq.CQ, isRCQ bool, err error) {
	cc, isRCQ, err := c.core().TryWait()
	return (*cq.CQ)(cc), isRCQ, err
}

// NativeAtomicWrite reports whether AtomicWrite is native
// (ibv_wr_atomic_write) on this connection, rather than an inline RDMA
// write.
func (c *Conn) NativeAtomicWrite() bool { return c.core().NativeAtomicWrite() }

// NativeFlush reports whether Flush is native (ibv_wr_flush) on this
// connection, rather than an 8-byte RDMA read.
func (c *Conn) NativeFlush() bool { return c.core().NativeFlush() }

// SRQ returns the shared receive queue the connection receives through
// (Config.SRQ), nil if none.
func (c *Conn) SRQ() *srq.SRQ { return (*srq.SRQ)(c.core().SRQ()) }

// Broken returns nil while the connection works, else the error its posts
// get, which matches [rpma.ErrConnBroken] and tells why: a failed
// completion, a post refused because the QP is in the error state, or a
// CLOSED or LOST event. For a nil or closed connection it returns the
// error posts get there too, matching [rpma.ErrInvalidArgument] and (when
// closed) os.ErrClosed.
func (c *Conn) Broken() error { return c.core().Broken() }

// GetSendComp mirrors librdmacm's rdma_get_send_comp: it returns exactly
// one completion of the connection's CQ (sends, writes, reads, flushes,
// atomic writes), blocking until one arrives: it polls first, else waits
// in Go's runtime poller (the CQ is re-armed and polled again, so a
// completion that arrives between the poll and the wait is not missed,
// and spurious wake-ups are absorbed). A failed completion is returned
// with its *rpma.WCError. It honours ctx (ctx.Err() on cancel or
// deadline) and, like cq.CQ.Wait, ends with a *rpma.ConnEventError when
// the connection is closed or lost.
//
// As in librdmacm it needs separate send and receive CQs: on a
// connection whose receives complete on its main CQ (Config.RCQSize 0,
// and no SRQ with its own receive CQ) it returns an error matching
// [rpma.ErrInvalidArgument] that says so.
//
// With a shared completion channel (Config.SharedCompChannel) it waits
// through Conn.Wait, whose events wake every waiter of the channel: an
// event for the receive CQ is acknowledged, the receive CQ re-armed, and
// its completions stay queued for GetRecvComp, which polls before it
// waits. Any number of goroutines may call GetSendComp and GetRecvComp at
// once, with or without a shared channel; each completion is returned to
// exactly one of them.
func (c *Conn) GetSendComp(ctx context.Context) (cq.WC, error) {
	wc, err := c.core().GetComp(ctx, false)
	return cq.WC(wc), err
}

// GetRecvComp mirrors librdmacm's rdma_get_recv_comp: GetSendComp for the
// connection's receive CQ. It needs Config.RCQSize > 0, and a connection
// whose receives do not go to an SRQ's receive CQ; otherwise the error
// matches [rpma.ErrInvalidArgument] and says why.
func (c *Conn) GetRecvComp(ctx context.Context) (cq.WC, error) {
	wc, err := c.core().GetComp(ctx, true)
	return cq.WC(wc), err
}
