//go:build rpma_native_flush && linux && cgo && !rpma_fake

package ibv

/*
#cgo LDFLAGS: -libverbs
#include <errno.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "rpma_ibv.h"
#include "rpma_inject.h"

static int rpma_has_wr_flush(struct ibv_qp *qp) {
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	return qpx != NULL && qpx->wr_flush != NULL;
}

// rpma_post_flush posts a native flush of [raddr, raddr+len)
// (ibv_wr_flush, IBV_FLUSH_RANGE), then reaps (see data_linux.go).
static int64_t rpma_post_flush(uintptr_t qpxh, uint64_t wr_id, uint32_t flags,
		uint64_t raddr, uint32_t rkey, uint64_t len, uint8_t type,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_qp_ex *qpx = (struct ibv_qp_ex *)qpxh;
	int ret = RPMA_INJECT(WR_COMPLETE_FLUSH); // skips the whole batch
	if (!ret) {
		ibv_wr_start(qpx);
		qpx->wr_id = wr_id;
		qpx->wr_flags = flags;
		ibv_wr_flush(qpx, rkey, raddr, (size_t)len, type, IBV_FLUSH_RANGE);
		ret = ibv_wr_complete(qpx);
	}
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0);
}

// rpma_post_write_flush posts an RDMA write and a native flush in one
// batch of the extended API: one call, one doorbell, all or nothing. The
// QP must have been created with IBV_QP_EX_WITH_RDMA_WRITE as well as
// IBV_QP_EX_WITH_FLUSH (CreateQP adds the first to the second); without
// them it refuses rather than calling an operation the provider did not
// set.
static int64_t rpma_post_write_flush(uintptr_t qpxh,
		uint64_t wr_id1, uint32_t flags1, uint64_t laddr, uint32_t len, uint32_t lkey,
		uint64_t raddr, uint32_t rkey,
		uint64_t wr_id2, uint32_t flags2, uint64_t fraddr, uint64_t flen, uint8_t type,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_qp_ex *qpx = (struct ibv_qp_ex *)qpxh;
	if (qpx->wr_rdma_write == NULL || qpx->wr_flush == NULL)
		return rpma_post_result(EOPNOTSUPP, 0, 0);
	int ret = RPMA_INJECT(WR_COMPLETE_WRITE_FLUSH); // skips the whole batch
	if (!ret) {
		ibv_wr_start(qpx);
		qpx->wr_id = wr_id1;
		qpx->wr_flags = flags1;
		ibv_wr_rdma_write(qpx, rkey, raddr);
		if (len > 0)
			ibv_wr_set_sge(qpx, lkey, laddr, len);
		else
			ibv_wr_set_sge_list(qpx, 0, NULL);
		qpx->wr_id = wr_id2;
		qpx->wr_flags = flags2;
		ibv_wr_flush(qpx, rkey, fraddr, (size_t)flen, type, IBV_FLUSH_RANGE);
		ret = ibv_wr_complete(qpx);
	}
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0 ? 2 : 0);
}
*/
import "C"

import "syscall"

// Compile-time checks of the rdma-core 45 constants defined in data.go
// and cm.go.
var (
	_ [0]struct{} = [C.IBV_ACCESS_FLUSH_GLOBAL - AccessFlushGlobal]struct{}{}
	_ [0]struct{} = [C.IBV_ACCESS_FLUSH_PERSISTENT - AccessFlushPersistent]struct{}{}
	_ [0]struct{} = [C.IBV_QP_EX_WITH_FLUSH - QPExWithFlush]struct{}{}
	_ [0]struct{} = [C.IBV_FLUSH_GLOBAL - FlushGlobal]struct{}{}
	_ [0]struct{} = [C.IBV_FLUSH_PERSISTENT - FlushPersistent]struct{}{}
)

// HasFlush reports whether the QP can post native flushes (created with
// IBV_QP_EX_WITH_FLUSH and the provider implements ibv_wr_flush).
func (q *QP) HasFlush() bool { return q.x != nil && C.rpma_has_wr_flush(q.c) != 0 }

// PostFlush posts a native flush of length bytes at raddr with the given
// placement type (FlushGlobal or FlushPersistent), then reaps.
func (q *QP) PostFlush(wrID uint64, flags uint32, raddr uint64, rkey uint32, length uint64, typ uint8, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_flush(q.xh, C.uint64_t(wrID), C.uint32_t(flags),
		C.uint64_t(raddr), C.uint32_t(rkey), C.uint64_t(length), C.uint8_t(typ),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}

// PostWriteFlush posts an RDMA write followed by a native flush of
// [fraddr, fraddr+length), in one crossing (all or nothing), then reaps.
func (q *QP) PostWriteFlush(wrID1 uint64, flags1 uint32, laddr uint64, length, lkey uint32, raddr uint64, rkey uint32,
	wrID2 uint64, flags2 uint32, fraddr uint64, typ uint8, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_write_flush(q.xh,
		C.uint64_t(wrID1), C.uint32_t(flags1), C.uint64_t(laddr), C.uint32_t(length), C.uint32_t(lkey),
		C.uint64_t(raddr), C.uint32_t(rkey),
		C.uint64_t(wrID2), C.uint32_t(flags2), C.uint64_t(fraddr), C.uint64_t(length), C.uint8_t(typ),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}
