/*
 * rpma_ibv.h: C helpers shared by the cgo files of package ibv.
 *
 * Every handle crosses from Go as a uintptr_t (no pointer argument, so
 * cgo checks no pointer on the way); the completions a post reaps, and
 * those GetWC polls, go into a buffer of struct rpma_wc in C memory.
 */
#ifndef RPMA_IBV_H
#define RPMA_IBV_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include "rpma_inject.h"

/* rpma_wc has the layout of the Go type WC. */
struct rpma_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
};

/*
 * rpma_poll_cq polls up to n completions of cq into out with plain
 * ibv_poll_cq (rdma-core < 55's rxe is reported to lose completions with
 * the extended polling API). It returns the number polled, or a negative
 * value on error when none was. An injected failure (site POLL_CQ) stands
 * for an ibv_poll_cq that returned minus the injected errno.
 */
static inline int rpma_poll_cq(uintptr_t cqh, uintptr_t outh, int n) {
	struct ibv_cq *cq = (struct ibv_cq *)cqh;
	struct rpma_wc *out = (struct rpma_wc *)outh;
	struct ibv_wc wc[16];
	int got = 0;
	while (got < n) {
		int want = n - got;
		if (want > 16)
			want = 16;
		int r = -RPMA_INJECT(POLL_CQ);
		if (!r)
			r = ibv_poll_cq(cq, want, wc);
		if (r < 0)
			return got > 0 ? got : r;
		for (int i = 0; i < r; i++) {
			struct rpma_wc *o = &out[got + i];
			o->wr_id = wc[i].wr_id;
			o->status = wc[i].status;
			o->opcode = wc[i].opcode;
			o->vendor_err = wc[i].vendor_err;
			o->byte_len = wc[i].byte_len;
			o->imm_data = wc[i].imm_data;
			o->qp_num = wc[i].qp_num;
			o->src_qp = wc[i].src_qp;
			o->wc_flags = wc[i].wc_flags;
		}
		got += r;
		if (r < want)
			break;
	}
	return got;
}

/*
 * The result of a post, packed so that nothing crosses by pointer: the
 * post's errno in bits 0-15, how many completions the post reaped in bits
 * 16-31, how many work requests of a chain the provider accepted in bits
 * 32-47.
 */
static inline int64_t rpma_post_result(int err, int reaped, int posted) {
	if (reaped < 0)
		reaped = 0; /* a poll failure is GetWC's to report */
	return (int64_t)(err & 0xffff) | ((int64_t)(reaped & 0xffff) << 16) | ((int64_t)(posted & 0xffff) << 32);
}

/* rpma_reap is the poll a post makes after posting (room 0: none). */
static inline int rpma_reap(uintptr_t cq, uintptr_t out, int room) {
	return room > 0 ? rpma_poll_cq(cq, out, room) : 0;
}

/*
 * A request of rpma_poll_many: a CQ, where its completions go and how many
 * fit (Go's ibv.Reap, field for field).
 */
struct rpma_sweep_req {
	uintptr_t cq;
	uintptr_t out;
	intptr_t room;
};

/*
 * rpma_poll_many polls the n CQs of reqs in one crossing, storing in got[i]
 * how many completions reqs[i]'s poll got, or a negative value when it
 * failed with none.
 */
static inline void rpma_poll_many(uintptr_t reqsh, uintptr_t goth, int n) {
	const struct rpma_sweep_req *reqs = (const struct rpma_sweep_req *)reqsh;
	int32_t *got = (int32_t *)goth;
	for (int i = 0; i < n; i++)
		got[i] = rpma_reap(reqs[i].cq, reqs[i].out, (int)reqs[i].room);
}

#endif
