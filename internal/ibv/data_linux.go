//go:build linux && cgo && !rpma_fake

package ibv

/*
#cgo LDFLAGS: -lrdmacm -libverbs
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "rpma_ibv.h"
#include "rpma_inject.h"

static struct ibv_qp *rpma_id_qp(struct rdma_cm_id *id) { return id->qp; }

// rpma_reg_mr wraps ibv_reg_mr (a macro since rdma-core 28) and reports
// errno.
static struct ibv_mr *rpma_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access, int *err_no) {
	int e = RPMA_INJECT(REG_MR);
	if (e) {
		*err_no = e;
		return NULL;
	}
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, (unsigned)access);
	*err_no = mr ? 0 : (errno ? errno : EIO);
	return mr;
}

static int rpma_advise_mr(struct ibv_pd *pd, int advice, uint32_t flags,
		uint64_t addr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	int e = RPMA_INJECT(ADVISE_MR);
	if (e)
		return e;
	return ibv_advise_mr(pd, (enum ibv_advise_mr_advice)advice, flags, &sge, 1);
}

static int rpma_is_iwarp(struct ibv_context *ctx) {
	return ctx->device->transport_type == IBV_TRANSPORT_IWARP;
}

// The posts below take every handle as an integer and return a packed
// result (rpma_post_result): one crossing, no pointer checked by cgo.
// After posting, each one polls up to room completions of cq into out
// (the reap: on a device that completes quickly, the completion of what
// was just posted is often there already, and GetWC then needs no
// crossing of its own).

// rpma_post_send posts one work request. A zero length posts no
// scatter/gather element (librpma's 0-byte operations). imm is in host
// order; the wire carries it in network order.
static int64_t rpma_post_send(uintptr_t qph, uint64_t wr_id, uint32_t opcode, uint32_t flags,
		uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t imm,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = (enum ibv_wr_opcode)opcode;
	wr.send_flags = flags;
	if (len > 0) {
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(imm);
	int ret = RPMA_INJECT(POST_SEND);
	if (!ret)
		ret = ibv_post_send((struct ibv_qp *)qph, &wr, &bad);
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0);
}

// rpma_post_write_read posts an RDMA write followed by an 8-byte RDMA read
// (the emulated flush) as one chain: one call, one doorbell. On failure
// the result says how many of the two the provider accepted (bad_wr): the
// first may be posted, and then its doorbell rung, when the second is
// refused. An injected failure posts neither.
static int64_t rpma_post_write_read(uintptr_t qph,
		uint64_t wr_id1, uint32_t flags1, uint64_t laddr, uint32_t len, uint32_t lkey,
		uint64_t raddr, uint32_t rkey,
		uint64_t wr_id2, uint32_t flags2, uint64_t faddr, uint32_t flkey, uint64_t fraddr,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_sge sge1 = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_sge sge2 = { .addr = faddr, .length = 8, .lkey = flkey };
	struct ibv_send_wr wr[2], *bad;
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = wr_id1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = flags1;
	if (len > 0) {
		wr[0].sg_list = &sge1;
		wr[0].num_sge = 1;
	}
	wr[0].wr.rdma.remote_addr = raddr;
	wr[0].wr.rdma.rkey = rkey;
	wr[0].next = &wr[1];
	wr[1].wr_id = wr_id2;
	wr[1].opcode = IBV_WR_RDMA_READ;
	wr[1].send_flags = flags2;
	wr[1].sg_list = &sge2;
	wr[1].num_sge = 1;
	wr[1].wr.rdma.remote_addr = fraddr;
	wr[1].wr.rdma.rkey = rkey;
	bad = NULL;
	int ret = RPMA_INJECT(POST_SEND_WRITE_READ);
	if (!ret)
		ret = ibv_post_send((struct ibv_qp *)qph, wr, &bad);
	int posted = ret == 0 ? 2 : (bad == &wr[1] ? 1 : 0);
	return rpma_post_result(ret, rpma_reap(cq, out, room), posted);
}

// struct rpma_batch_wr is one work request of a batch (BatchWR in Go, of
// the same layout): an RDMA write or read of one scatter/gather element.
struct rpma_batch_wr {
	uint64_t wr_id;
	uint64_t laddr;
	uint64_t raddr;
	uint32_t opcode;
	uint32_t flags;
	uint32_t len;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t pad;
};
enum { offsetof_rpma_batch_wr_rkey = offsetof(struct rpma_batch_wr, rkey) };

#define RPMA_MAX_BATCH 32

// rpma_post_batch posts n (1 to RPMA_MAX_BATCH) RDMA writes and reads as
// one chain: one call, one doorbell. On failure the result says how many
// the provider accepted (bad_wr): those before bad_wr are posted. An
// injected failure posts none.
static int64_t rpma_post_batch(uintptr_t qph, const struct rpma_batch_wr *b, int n,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_sge sge[RPMA_MAX_BATCH];
	struct ibv_send_wr wr[RPMA_MAX_BATCH], *bad;
	if (n < 1 || n > RPMA_MAX_BATCH)
		return rpma_post_result(EINVAL, 0, 0);
	memset(wr, 0, sizeof(wr[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		sge[i].addr = b[i].laddr;
		sge[i].length = b[i].len;
		sge[i].lkey = b[i].lkey;
		wr[i].wr_id = b[i].wr_id;
		wr[i].opcode = (enum ibv_wr_opcode)b[i].opcode;
		wr[i].send_flags = b[i].flags;
		if (b[i].len > 0) {
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
		}
		wr[i].wr.rdma.remote_addr = b[i].raddr;
		wr[i].wr.rdma.rkey = b[i].rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	int ret = RPMA_INJECT(POST_SEND_BATCH);
	if (!ret)
		ret = ibv_post_send((struct ibv_qp *)qph, wr, &bad);
	int posted = ret == 0 ? n : (bad ? (int)(bad - wr) : 0);
	return rpma_post_result(ret, rpma_reap(cq, out, room), posted);
}

// rpma_post_inline8 posts an 8-byte RDMA write of value, inline (the
// provider copies the data while posting).
static int64_t rpma_post_inline8(uintptr_t qph, uint64_t wr_id, uint32_t flags,
		uint64_t raddr, uint32_t rkey, uint64_t value, uintptr_t cq, uintptr_t out, int room) {
	uint64_t data = value;
	struct ibv_sge sge = { .addr = (uintptr_t)&data, .length = 8, .lkey = 0 };
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = flags | IBV_SEND_INLINE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	int ret = RPMA_INJECT(POST_SEND_INLINE8);
	if (!ret)
		ret = ibv_post_send((struct ibv_qp *)qph, &wr, &bad);
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0);
}

// rpma_post_atomic_write posts a native atomic write (ibv_wr_atomic_write);
// the provider copies the 8 bytes while posting. An injected failure of
// ibv_wr_complete skips the whole batch (from ibv_wr_start on), so the
// provider's batch state is left as it was.
static int64_t rpma_post_atomic_write(uintptr_t qpxh, uint64_t wr_id, uint32_t flags,
		uint64_t raddr, uint32_t rkey, uint64_t value, uintptr_t cq, uintptr_t out, int room) {
	struct ibv_qp_ex *qpx = (struct ibv_qp_ex *)qpxh;
	uint64_t data = value;
	int ret = RPMA_INJECT(WR_COMPLETE_ATOMIC_WRITE);
	if (!ret) {
		ibv_wr_start(qpx);
		qpx->wr_id = wr_id;
		qpx->wr_flags = flags;
		ibv_wr_atomic_write(qpx, rkey, raddr, &data);
		ret = ibv_wr_complete(qpx);
	}
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0);
}

// rpma_post_atomic posts a remote compare-and-swap or fetch-and-add of
// the 8-byte word at raddr; the old value lands at laddr.
static int64_t rpma_post_atomic(uintptr_t qph, uint64_t wr_id, uint32_t opcode, uint32_t flags,
		uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t compare_add, uint64_t swap,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_sge sge = { .addr = laddr, .length = 8, .lkey = lkey };
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = (enum ibv_wr_opcode)opcode;
	wr.send_flags = flags;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	int ret = RPMA_INJECT(POST_SEND_ATOMIC);
	if (!ret)
		ret = ibv_post_send((struct ibv_qp *)qph, &wr, &bad);
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0);
}

static int rpma_has_wr_atomic_write(struct ibv_qp *qp) {
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	return qpx != NULL && qpx->wr_atomic_write != NULL;
}

static struct ibv_qp_ex *rpma_qp_ex(struct ibv_qp *qp) { return ibv_qp_to_qp_ex(qp); }

static int rpma_post_recv(uintptr_t qph, uint64_t wr_id, uint64_t laddr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	if (len > 0) {
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	int ret = RPMA_INJECT(POST_RECV);
	return ret ? ret : ibv_post_recv((struct ibv_qp *)qph, &wr, &bad);
}

static int rpma_post_srq_recv(uintptr_t srqh, uint64_t wr_id, uint64_t laddr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	if (len > 0) {
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	int ret = RPMA_INJECT(POST_SRQ_RECV);
	return ret ? ret : ibv_post_srq_recv((struct ibv_srq *)srqh, &wr, &bad);
}

static int rpma_qp_state(struct ibv_qp *qp, int *state) {
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int ret = RPMA_INJECT(QUERY_QP);
	if (!ret)
		ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	if (ret)
		return ret;
	*state = attr.qp_state;
	return 0;
}

// rpma_qp_to_error moves the QP to the error state: its outstanding work
// requests complete with flush errors.
static int rpma_qp_to_error(struct ibv_qp *qp) {
	struct ibv_qp_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_ERR;
	int ret = RPMA_INJECT(MODIFY_QP);
	return ret ? ret : ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

static struct ibv_srq *rpma_create_srq(struct ibv_pd *pd, uint32_t max_wr, uint32_t *got, int *err_no) {
	struct ibv_srq_init_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.attr.max_wr = max_wr;
	attr.attr.max_sge = 1;
	int e = RPMA_INJECT(CREATE_SRQ);
	if (e) {
		*err_no = e;
		*got = 0;
		return NULL;
	}
	errno = 0;
	struct ibv_srq *srq = ibv_create_srq(pd, &attr);
	*err_no = srq ? 0 : (errno ? errno : EIO);
	*got = attr.attr.max_wr;
	return srq;
}

// The wrappers below hold the fault-injection sites of the calls the Go
// code makes (rpma_inject.h). An injected failure of a destroy leaves the
// object alive: the next call destroys it.
static int rpma_dereg_mr(struct ibv_mr *mr) {
	int e = RPMA_INJECT(DEREG_MR);
	return e ? e : ibv_dereg_mr(mr);
}

static int rpma_destroy_srq(struct ibv_srq *srq) {
	int e = RPMA_INJECT(DESTROY_SRQ);
	return e ? e : ibv_destroy_srq(srq);
}

static int rpma_resize_cq(struct ibv_cq *cq, int n) {
	int e = RPMA_INJECT(RESIZE_CQ);
	return e ? e : ibv_resize_cq(cq, n);
}
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// Compile-time checks of the constants against the headers.
var (
	_ [0]struct{} = [C.IBV_ACCESS_LOCAL_WRITE - AccessLocalWrite]struct{}{}
	_ [0]struct{} = [C.IBV_ACCESS_REMOTE_WRITE - AccessRemoteWrite]struct{}{}
	_ [0]struct{} = [C.IBV_ACCESS_REMOTE_READ - AccessRemoteRead]struct{}{}
	_ [0]struct{} = [C.IBV_ACCESS_REMOTE_ATOMIC - AccessRemoteAtomic]struct{}{}
	_ [0]struct{} = [C.IBV_ACCESS_ON_DEMAND - AccessOnDemand]struct{}{}
	_ [0]struct{} = [C.IBV_WR_RDMA_WRITE - OpRDMAWrite]struct{}{}
	_ [0]struct{} = [C.IBV_WR_RDMA_WRITE_WITH_IMM - OpRDMAWriteWithImm]struct{}{}
	_ [0]struct{} = [C.IBV_WR_SEND - OpSend]struct{}{}
	_ [0]struct{} = [C.IBV_WR_SEND_WITH_IMM - OpSendWithImm]struct{}{}
	_ [0]struct{} = [C.IBV_WR_RDMA_READ - OpRDMARead]struct{}{}
	_ [0]struct{} = [C.IBV_WR_ATOMIC_CMP_AND_SWP - OpAtomicCmpAndSwp]struct{}{}
	_ [0]struct{} = [C.IBV_WR_ATOMIC_FETCH_AND_ADD - OpAtomicFetchAdd]struct{}{}
	_ [0]struct{} = [C.IBV_ATOMIC_HCA - AtomicHCA]struct{}{}
	_ [0]struct{} = [C.IBV_ATOMIC_GLOB - AtomicGlob]struct{}{}
	_ [0]struct{} = [C.IBV_SEND_FENCE - SendFence]struct{}{}
	_ [0]struct{} = [C.IBV_SEND_SIGNALED - SendSignaled]struct{}{}
	_ [0]struct{} = [C.IBV_SEND_SOLICITED - SendSolicited]struct{}{}
	_ [0]struct{} = [C.IBV_SEND_INLINE - SendInline]struct{}{}
	_ [0]struct{} = [C.IBV_QPS_RTS - QPStateRTS]struct{}{}
	_ [0]struct{} = [C.IBV_QPS_ERR - QPStateErr]struct{}{}
	_ [0]struct{} = [C.IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE - AdvisePrefetchWrite]struct{}{}
	_ [0]struct{} = [C.IBV_ADVISE_MR_FLAG_FLUSH - AdviseFlagFlush]struct{}{}
)

// IsIWARP reports whether the device's transport is iWARP, whose RDMA read
// is a write into the reading side's memory.
func (c *Context) IsIWARP() bool { return C.rpma_is_iwarp(c.c) != 0 }

// MR is a memory registration (struct ibv_mr), with its fields copied.
type MR struct {
	c      *C.struct_ibv_mr
	Addr   uint64
	Length uint64
	LKey   uint32
	RKey   uint32
}

// RegMR registers length bytes at addr with the given IBV_ACCESS_* flags
// (ibv_reg_mr). addr must not point into the Go heap: the device keeps
// using the memory after the call.
func (pd *PD) RegMR(addr unsafe.Pointer, length int, access int) (*MR, error) {
	var errno C.int
	mr := C.rpma_reg_mr(pd.c, addr, C.size_t(length), C.int(access), &errno)
	if mr == nil {
		return nil, callError("ibv_reg_mr", syscall.Errno(errno))
	}
	objInc(ObjMR)
	return &MR{
		c:      mr,
		Addr:   uint64(uintptr(mr.addr)),
		Length: uint64(mr.length),
		LKey:   uint32(mr.lkey),
		RKey:   uint32(mr.rkey),
	}, nil
}

// Dereg deregisters the MR (ibv_dereg_mr). It is a no-op on a nil or
// deregistered MR.
func (m *MR) Dereg() error {
	if m == nil || m.c == nil {
		return nil
	}
	if rc := C.rpma_dereg_mr(m.c); rc != 0 {
		return callError("ibv_dereg_mr", syscall.Errno(rc))
	}
	m.c = nil
	objDec(ObjMR)
	return nil
}

// AdviseMR gives advice about a range of a registration (ibv_advise_mr).
func (pd *PD) AdviseMR(advice int, flags uint32, addr uint64, length uint32, lkey uint32) error {
	rc := C.rpma_advise_mr(pd.c, C.int(advice), C.uint32_t(flags), C.uint64_t(addr), C.uint32_t(length), C.uint32_t(lkey))
	if rc != 0 {
		return callError("ibv_advise_mr", syscall.Errno(rc))
	}
	return nil
}

// QP is a queue pair (struct ibv_qp), borrowed from its CM id.
type QP struct {
	c  *C.struct_ibv_qp
	x  *C.struct_ibv_qp_ex // the extended QP, nil when not created with send ops flags
	h  C.uintptr_t         // c as an integer, for the posts
	xh C.uintptr_t         // x as an integer
}

// QP returns the id's queue pair, nil if it has none. ext says whether it
// was created with extended send operations (QPInitAttr.SendOpsFlags).
func (id *CMID) QP(ext bool) *QP {
	qp := C.rpma_id_qp((*C.struct_rdma_cm_id)(unsafe.Pointer(id.c)))
	if qp == nil {
		return nil
	}
	q := &QP{c: qp, h: C.uintptr_t(uintptr(unsafe.Pointer(qp)))}
	if ext {
		q.x = C.rpma_qp_ex(q.c)
		q.xh = C.uintptr_t(uintptr(unsafe.Pointer(q.x)))
	}
	return q
}

// HasAtomicWrite reports whether the QP can post native atomic writes
// (created with IBV_QP_EX_WITH_ATOMIC_WRITE and the provider implements
// it).
func (q *QP) HasAtomicWrite() bool { return q.x != nil && C.rpma_has_wr_atomic_write(q.c) != 0 }

// State queries the QP's state (ibv_query_qp).
func (q *QP) State() (int, error) {
	var s C.int
	if rc := C.rpma_qp_state(q.c, &s); rc != 0 {
		return 0, callError("ibv_query_qp", syscall.Errno(rc))
	}
	return int(s), nil
}

// ToError moves the QP to the error state (ibv_modify_qp): its
// outstanding work requests complete with flush errors, and it accepts no
// more.
func (q *QP) ToError() error {
	if rc := C.rpma_qp_to_error(q.c); rc != 0 {
		return callError("ibv_modify_qp", syscall.Errno(rc))
	}
	return nil
}

// unpack splits a post's packed result: the errno (0 on success), the
// completions reaped, and how many work requests were posted.
func unpack(r C.int64_t) (errno syscall.Errno, reaped, posted int) {
	return syscall.Errno(r & 0xffff), int(r>>16) & 0xffff, int(r>>32) & 0xffff
}

// PostSend posts one work request (ibv_post_send) in one crossing, then
// reaps as r says, and returns the errno of the failure (0 on success)
// and the completions reaped. A zero length posts no scatter/gather
// element. imm is in host order.
func (q *QP) PostSend(wrID uint64, op SendOp, flags uint32, laddr uint64, length, lkey uint32,
	raddr uint64, rkey, imm uint32, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_send(q.h, C.uint64_t(wrID), C.uint32_t(op), C.uint32_t(flags),
		C.uint64_t(laddr), C.uint32_t(length), C.uint32_t(lkey), C.uint64_t(raddr), C.uint32_t(rkey), C.uint32_t(imm),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}

// PostWriteRead posts an RDMA write and an 8-byte RDMA read from fraddr
// into faddr (same rkey) as one chain, in one crossing, then reaps. On
// failure posted says how many of the two were posted (the first may be,
// when the provider refuses the second).
func (q *QP) PostWriteRead(wrID1 uint64, flags1 uint32, laddr uint64, length, lkey uint32, raddr uint64, rkey uint32,
	wrID2 uint64, flags2 uint32, faddr uint64, flkey uint32, fraddr uint64, r Reap) (errno syscall.Errno, posted, reaped int) {
	errno, reaped, posted = unpack(C.rpma_post_write_read(q.h,
		C.uint64_t(wrID1), C.uint32_t(flags1), C.uint64_t(laddr), C.uint32_t(length), C.uint32_t(lkey),
		C.uint64_t(raddr), C.uint32_t(rkey),
		C.uint64_t(wrID2), C.uint32_t(flags2), C.uint64_t(faddr), C.uint32_t(flkey), C.uint64_t(fraddr),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, posted, reaped
}

// PostBatch posts the RDMA writes and reads of wrs (1 to MaxBatch) as one
// chain, in one crossing and with one doorbell, then reaps. On failure
// posted says how many of wrs, from the first, the provider accepted.
func (q *QP) PostBatch(wrs []BatchWR, r Reap) (errno syscall.Errno, posted, reaped int) {
	if len(wrs) == 0 || len(wrs) > MaxBatch {
		return syscall.EINVAL, 0, 0
	}
	errno, reaped, posted = unpack(C.rpma_post_batch(q.h, (*C.struct_rpma_batch_wr)(unsafe.Pointer(&wrs[0])), C.int(len(wrs)),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, posted, reaped
}

// BatchWR and struct rpma_batch_wr have one layout.
var (
	_ [0]struct{} = [unsafe.Sizeof(BatchWR{}) - C.sizeof_struct_rpma_batch_wr]struct{}{}
	_ [0]struct{} = [C.sizeof_struct_rpma_batch_wr - unsafe.Sizeof(BatchWR{})]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(BatchWR{}.RKey) - C.offsetof_rpma_batch_wr_rkey]struct{}{}
	_ [0]struct{} = [C.offsetof_rpma_batch_wr_rkey - unsafe.Offsetof(BatchWR{}.RKey)]struct{}{}
	_ [0]struct{} = [MaxBatch - C.RPMA_MAX_BATCH]struct{}{}
	_ [0]struct{} = [C.RPMA_MAX_BATCH - MaxBatch]struct{}{}
)

// PostInline8 posts an inline 8-byte RDMA write of value (its bytes in
// memory order) to raddr, then reaps.
func (q *QP) PostInline8(wrID uint64, flags uint32, raddr uint64, rkey uint32, value uint64, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_inline8(q.h, C.uint64_t(wrID), C.uint32_t(flags), C.uint64_t(raddr), C.uint32_t(rkey), C.uint64_t(value),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}

// PostAtomicWrite posts a native 8-byte atomic write of value
// (ibv_wr_atomic_write), then reaps. The QP must have HasAtomicWrite.
func (q *QP) PostAtomicWrite(wrID uint64, flags uint32, raddr uint64, rkey uint32, value uint64, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_atomic_write(q.xh, C.uint64_t(wrID), C.uint32_t(flags), C.uint64_t(raddr), C.uint32_t(rkey), C.uint64_t(value),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}

// PostAtomic posts a remote atomic (op: OpAtomicCmpAndSwp with compare
// and swap, or OpAtomicFetchAdd with the addend in compareAdd) of the
// 8-byte word at raddr, whose old value lands at laddr, then reaps.
func (q *QP) PostAtomic(wrID uint64, op SendOp, flags uint32, laddr uint64, lkey uint32, raddr uint64, rkey uint32,
	compareAdd, swap uint64, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_atomic(q.h, C.uint64_t(wrID), C.uint32_t(op), C.uint32_t(flags),
		C.uint64_t(laddr), C.uint32_t(lkey), C.uint64_t(raddr), C.uint32_t(rkey), C.uint64_t(compareAdd), C.uint64_t(swap),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}

// PostRecv posts a receive (ibv_post_recv); a zero length posts no
// scatter/gather element.
func (q *QP) PostRecv(wrID uint64, laddr uint64, length, lkey uint32) syscall.Errno {
	return syscall.Errno(C.rpma_post_recv(q.h, C.uint64_t(wrID), C.uint64_t(laddr), C.uint32_t(length), C.uint32_t(lkey)))
}

// SRQ is a shared receive queue (struct ibv_srq).
type SRQ struct {
	c *C.struct_ibv_srq
	h C.uintptr_t // c as an integer, for the posts
}

// CreateSRQ creates a shared receive queue of at least maxWR work requests
// and one scatter/gather element each (ibv_create_srq); it returns the
// size the provider granted.
func (pd *PD) CreateSRQ(maxWR int) (*SRQ, int, error) {
	var got C.uint32_t
	var errno C.int
	s := C.rpma_create_srq(pd.c, C.uint32_t(maxWR), &got, &errno)
	if s == nil {
		return nil, 0, callError("ibv_create_srq", syscall.Errno(errno))
	}
	objInc(ObjSRQ)
	return &SRQ{c: s, h: C.uintptr_t(uintptr(unsafe.Pointer(s)))}, int(got), nil
}

// PostRecv posts a receive to the SRQ (ibv_post_srq_recv).
func (s *SRQ) PostRecv(wrID uint64, laddr uint64, length, lkey uint32) syscall.Errno {
	return syscall.Errno(C.rpma_post_srq_recv(s.h, C.uint64_t(wrID), C.uint64_t(laddr), C.uint32_t(length), C.uint32_t(lkey)))
}

// Destroy destroys the SRQ (ibv_destroy_srq). It is a no-op on a nil or
// destroyed SRQ.
func (s *SRQ) Destroy() error {
	if s == nil || s.c == nil {
		return nil
	}
	if rc := C.rpma_destroy_srq(s.c); rc != 0 {
		return callError("ibv_destroy_srq", syscall.Errno(rc))
	}
	s.c = nil
	objDec(ObjSRQ)
	return nil
}

// Resize resizes the CQ to at least n entries (ibv_resize_cq); CQE then
// reports the size granted.
func (q *CQ) Resize(n int) error {
	if rc := C.rpma_resize_cq(q.c, C.int(n)); rc != 0 {
		return callError("ibv_resize_cq", syscall.Errno(rc))
	}
	return nil
}
