/*
 * rpma_stubnic.h: a stub RDMA provider held in memory, for the build tag
 * rpma_stubnic (stubnic_linux.go). It measures the CPU the library spends
 * per operation natively: no device, no kernel, no emulated NIC.
 *
 * The stub is a struct ibv_context, ibv_cq and ibv_qp whose context ops
 * (post_send, poll_cq, req_notify_cq, post_recv) are the functions below,
 * so that the static inlines of <infiniband/verbs.h> (ibv_post_send,
 * ibv_poll_cq, ibv_req_notify_cq), called by the package's real C
 * helpers (rpma_ibv.h, data_linux.go), dispatch to it exactly as they
 * dispatch to a hardware provider's. A post completes at once: every
 * signaled work request puts a successful completion in the CQ's ring, and
 * a poll takes them out. Nothing is copied (a NIC's DMA costs the CPU
 * nothing), and only the ops above are set: any other call on the stub's
 * objects (ibv_query_qp, ibv_destroy_cq, ibv_qp_to_qp_ex, ...) would go
 * into libibverbs with objects it did not make, so the stub's users make
 * none.
 *
 * The second half is a C loop making the calls librpma makes per
 * operation (its rpma_write, rpma_read and rpma_cq_get_wc, written here
 * from their documented behaviour: the argument checks, one work request
 * with one scatter/gather element built on the stack, ibv_post_send, and
 * ibv_poll_cq with its result mapped), timed in C, on the same stub.
 */
#ifndef RPMA_STUBNIC_H
#define RPMA_STUBNIC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/* A completion waiting in the stub's ring. */
struct rpma_stub_cqe {
	uint64_t wr_id;
	uint32_t opcode; /* enum ibv_wc_opcode */
	uint32_t byte_len;
};

/* The stub device: one context, one CQ, one QP sending to it. */
struct rpma_stubnic {
	struct ibv_context ctx;
	struct ibv_cq cq;
	struct ibv_qp qp;
	struct rpma_stub_cqe *ring; /* depth entries, a power of two */
	uint32_t depth;
	uint32_t head; /* completions made (post) */
	uint32_t tail; /* completions taken (poll) */
	uint64_t posted;     /* work requests accepted */
	uint64_t unsignaled; /* of which unsignaled (no completion) */
	uint64_t refused;    /* posts refused (queue full or QP not in RTS) */
	uint64_t armed;      /* req_notify_cq calls */
	uint64_t recvs;      /* receives accepted (never completed) */
};

static inline struct rpma_stubnic *rpma_stub_of_qp(struct ibv_qp *qp) {
	return (struct rpma_stubnic *)((char *)qp - offsetof(struct rpma_stubnic, qp));
}

static inline struct rpma_stubnic *rpma_stub_of_cq(struct ibv_cq *cq) {
	return (struct rpma_stubnic *)((char *)cq - offsetof(struct rpma_stubnic, cq));
}

/* rpma_stub_wc_opcode maps a send opcode to its completion's, or -1. */
static inline int rpma_stub_wc_opcode(enum ibv_wr_opcode op) {
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return IBV_WC_SEND;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return -1;
	}
}

/*
 * rpma_stub_post_send accepts the chain wr in order. A signaled request
 * completes at once (its completion enters the ring); the first one it
 * cannot take (QP not in RTS: EINVAL; unknown opcode: EINVAL; ring full:
 * ENOMEM, as rxe reports a full queue) is *bad, and those before it stay
 * posted, as with a hardware provider.
 */
static int rpma_stub_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
	struct rpma_stubnic *n = rpma_stub_of_qp(qp);
	for (; wr != NULL; wr = wr->next) {
		int op = rpma_stub_wc_opcode(wr->opcode);
		int err = 0;
		if (qp->state != IBV_QPS_RTS || op < 0)
			err = EINVAL;
		else if ((wr->send_flags & IBV_SEND_SIGNALED) && n->head - n->tail == n->depth)
			err = ENOMEM;
		if (err) {
			n->refused++;
			*bad = wr;
			return err;
		}
		n->posted++;
		if (!(wr->send_flags & IBV_SEND_SIGNALED)) {
			n->unsignaled++;
			continue;
		}
		uint32_t len = 0;
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		struct rpma_stub_cqe *e = &n->ring[n->head & (n->depth - 1)];
		e->wr_id = wr->wr_id;
		e->opcode = (uint32_t)op;
		e->byte_len = len;
		n->head++;
	}
	return 0;
}

/* rpma_stub_poll_cq takes up to num completions out of the ring. */
static int rpma_stub_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc) {
	struct rpma_stubnic *n = rpma_stub_of_cq(cq);
	int got = 0;
	while (got < num && n->tail != n->head) {
		const struct rpma_stub_cqe *e = &n->ring[n->tail & (n->depth - 1)];
		struct ibv_wc *w = &wc[got];
		w->wr_id = e->wr_id;
		w->status = IBV_WC_SUCCESS;
		w->opcode = (enum ibv_wc_opcode)e->opcode;
		w->vendor_err = 0;
		w->byte_len = e->byte_len;
		w->imm_data = 0;
		w->qp_num = n->qp.qp_num;
		w->src_qp = 0;
		w->wc_flags = 0;
		n->tail++;
		got++;
	}
	return got;
}

/* rpma_stub_req_notify_cq arms the CQ: the stub only counts it. */
static int rpma_stub_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	(void)solicited_only;
	rpma_stub_of_cq(cq)->armed++;
	return 0;
}

/* rpma_stub_post_recv accepts receives; no send ever completes them. */
static int rpma_stub_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	(void)bad;
	for (; wr != NULL; wr = wr->next)
		rpma_stub_of_qp(qp)->recvs++;
	return 0;
}

/* rpma_stubnic_new makes a stub whose CQ holds depth completions. */
static struct rpma_stubnic *rpma_stubnic_new(uint32_t depth) {
	if (depth == 0 || (depth & (depth - 1)) != 0)
		return NULL;
	struct rpma_stubnic *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->ring = calloc(depth, sizeof(n->ring[0]));
	if (n->ring == NULL) {
		free(n);
		return NULL;
	}
	n->depth = depth;
	n->ctx.ops.post_send = rpma_stub_post_send;
	n->ctx.ops.post_recv = rpma_stub_post_recv;
	n->ctx.ops.poll_cq = rpma_stub_poll_cq;
	n->ctx.ops.req_notify_cq = rpma_stub_req_notify_cq;
	n->ctx.cmd_fd = -1;
	n->ctx.async_fd = -1;
	n->ctx.num_comp_vectors = 1;
	n->cq.context = &n->ctx;
	n->cq.cqe = (int)depth;
	n->qp.context = &n->ctx;
	n->qp.send_cq = &n->cq;
	n->qp.recv_cq = &n->cq;
	n->qp.qp_num = 0x11;
	n->qp.state = IBV_QPS_RTS;
	n->qp.qp_type = IBV_QPT_RC;
	return n;
}

static void rpma_stubnic_free(struct rpma_stubnic *n) {
	if (n == NULL)
		return;
	free(n->ring);
	free(n);
}

static void rpma_stubnic_set_state(struct rpma_stubnic *n, int state) {
	n->qp.state = (enum ibv_qp_state)state;
}

/* --- librpma's calls per operation, on the stub ---------------------- */

/* librpma's return codes that the loop can meet. */
enum { RPMA_CL_OK = 0, RPMA_CL_E_PROVIDER = -1, RPMA_CL_E_INVAL = -3, RPMA_CL_E_NO_COMPLETION = -8,
	RPMA_CL_E_UNKNOWN = -100 };

/* librpma's completion flags: only ALWAYS posts signaled. */
enum { RPMA_CL_F_ON_ERROR = 1, RPMA_CL_F_ALWAYS = 3 };

/* A local registration (struct rpma_mr: the ibv_mr and its usage). */
struct rpma_cl_mr {
	struct ibv_mr *ibv_mr;
	int usage;
};

/* A remote registration as a descriptor gives it (struct rpma_mr_remote). */
struct rpma_cl_mr_remote {
	uint64_t raddr;
	uint64_t size;
	uint32_t rkey;
	int usage;
};

/* The parts of rpma_conn and rpma_cq that the data path reads. */
struct rpma_cl_cq {
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
};

struct rpma_cl_id {
	struct ibv_qp *qp; /* as struct rdma_cm_id holds it */
};

struct rpma_cl_conn {
	struct rpma_cl_id *id;
	struct rpma_cl_cq *cq;
};

/*
 * The functions of librpma below are not inlined (noinline): librpma's
 * are calls into a shared library, rpma_mr_write and rpma_mr_read calls
 * into another of its files, and the instruction counts are then split
 * by function.
 */
#define RPMA_CL_CALL __attribute__((noinline))

/*
 * rpma_cl_mr_post is librpma's one-request post (rpma_mr_read and
 * rpma_mr_write): one SGE unless the transfer has no local region, the
 * remote address and key, the op context as wr_id, SIGNALED only for
 * RPMA_F_COMPLETION_ALWAYS, then ibv_post_send.
 */
static RPMA_CL_CALL int rpma_cl_mr_post(struct ibv_qp *qp, enum ibv_wr_opcode opcode, const struct rpma_cl_mr *local,
		size_t local_off, const struct rpma_cl_mr_remote *remote, size_t remote_off, size_t len,
		int flags, const void *op_context) {
	struct ibv_send_wr wr;
	struct ibv_send_wr *bad;
	struct ibv_sge sge;
	if (local == NULL) {
		wr.sg_list = NULL;
		wr.num_sge = 0;
		wr.wr.rdma.remote_addr = 0;
		wr.wr.rdma.rkey = 0;
	} else {
		sge.addr = (uint64_t)((uintptr_t)local->ibv_mr->addr + local_off);
		sge.length = (uint32_t)len;
		sge.lkey = local->ibv_mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = remote->raddr + remote_off;
		wr.wr.rdma.rkey = remote->rkey;
	}
	wr.wr_id = (uint64_t)(uintptr_t)op_context;
	wr.next = NULL;
	wr.opcode = opcode;
	wr.send_flags = (flags & RPMA_CL_F_ALWAYS) == RPMA_CL_F_ALWAYS ? IBV_SEND_SIGNALED : 0;
	if (ibv_post_send(qp, &wr, &bad))
		return RPMA_CL_E_PROVIDER;
	return RPMA_CL_OK;
}

/* rpma_cl_write is rpma_write: its argument checks, then the post. */
static RPMA_CL_CALL int rpma_cl_write(struct rpma_cl_conn *conn, struct rpma_cl_mr_remote *dst, size_t dst_off,
		const struct rpma_cl_mr *src, size_t src_off, size_t len, int flags, const void *op_context) {
	if (conn == NULL || flags == 0 || (src == NULL && (dst != NULL || src_off != 0 || dst_off != 0 || len != 0)) ||
			(src != NULL && dst == NULL))
		return RPMA_CL_E_INVAL;
	return rpma_cl_mr_post(conn->id->qp, IBV_WR_RDMA_WRITE, src, src_off, dst, dst_off, len, flags, op_context);
}

/* rpma_cl_read is rpma_read. */
static RPMA_CL_CALL int rpma_cl_read(struct rpma_cl_conn *conn, struct rpma_cl_mr *dst, size_t dst_off,
		const struct rpma_cl_mr_remote *src, size_t src_off, size_t len, int flags, const void *op_context) {
	if (conn == NULL || flags == 0 || (src == NULL && (dst != NULL || src_off != 0 || dst_off != 0 || len != 0)) ||
			(src != NULL && dst == NULL))
		return RPMA_CL_E_INVAL;
	return rpma_cl_mr_post(conn->id->qp, IBV_WR_RDMA_READ, dst, dst_off, src, src_off, len, flags, op_context);
}

/*
 * rpma_cl_flush is rpma_flush with the flush emulated (librpma's on a
 * device without native flush): its checks, then an 8-byte RDMA read of
 * the flushed range into the connection's own flush buffer.
 */
static RPMA_CL_CALL int rpma_cl_flush(struct rpma_cl_conn *conn, struct rpma_cl_mr_remote *dst, size_t dst_off,
		size_t len, int type, int flags, const void *op_context, const struct rpma_cl_mr *flush_mr) {
	if (conn == NULL || dst == NULL || flags == 0 || type != 0)
		return RPMA_CL_E_INVAL;
	(void)len;
	return rpma_cl_mr_post(conn->id->qp, IBV_WR_RDMA_READ, flush_mr, 0, dst, dst_off, 8, flags, op_context);
}

/*
 * rpma_cl_atomic_write is rpma_atomic_write as librpma 1.2 emulates it:
 * an inline, fenced 8-byte RDMA write of the caller's bytes.
 */
static RPMA_CL_CALL int rpma_cl_atomic_write(struct rpma_cl_conn *conn, struct rpma_cl_mr_remote *dst,
		size_t dst_off, const char src[8], int flags, const void *op_context) {
	if (conn == NULL || dst == NULL || src == NULL || flags == 0 || dst_off % 8 != 0)
		return RPMA_CL_E_INVAL;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge = { .addr = (uint64_t)(uintptr_t)src, .length = 8, .lkey = 0 };
	wr.wr_id = (uint64_t)(uintptr_t)op_context;
	wr.next = NULL;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_FENCE;
	if ((flags & RPMA_CL_F_ALWAYS) == RPMA_CL_F_ALWAYS)
		wr.send_flags |= IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = dst->raddr + dst_off;
	wr.wr.rdma.rkey = dst->rkey;
	if (ibv_post_send(conn->id->qp, &wr, &bad))
		return RPMA_CL_E_PROVIDER;
	return RPMA_CL_OK;
}

/* rpma_cl_send is rpma_send: one SGE of the source, IBV_WR_SEND. */
static RPMA_CL_CALL int rpma_cl_send(struct rpma_cl_conn *conn, const struct rpma_cl_mr *src, size_t offset,
		size_t len, int flags, const void *op_context) {
	if (conn == NULL || flags == 0 || (src == NULL && (offset != 0 || len != 0)))
		return RPMA_CL_E_INVAL;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	if (src != NULL) {
		sge.addr = (uint64_t)((uintptr_t)src->ibv_mr->addr + offset);
		sge.length = (uint32_t)len;
		sge.lkey = src->ibv_mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	} else {
		wr.sg_list = NULL;
		wr.num_sge = 0;
	}
	wr.wr_id = (uint64_t)(uintptr_t)op_context;
	wr.next = NULL;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = (flags & RPMA_CL_F_ALWAYS) == RPMA_CL_F_ALWAYS ? IBV_SEND_SIGNALED : 0;
	if (ibv_post_send(conn->id->qp, &wr, &bad))
		return RPMA_CL_E_PROVIDER;
	return RPMA_CL_OK;
}

/* rpma_cl_cq_get_wc is rpma_cq_get_wc: ibv_poll_cq, its result mapped. */
static RPMA_CL_CALL int rpma_cl_cq_get_wc(struct rpma_cl_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got) {
	if (cq == NULL || num_entries < 1 || wc == NULL || (num_entries > 1 && num_entries_got == NULL))
		return RPMA_CL_E_INVAL;
	int result = ibv_poll_cq(cq->cq, num_entries, wc);
	if (result == 0)
		return RPMA_CL_E_NO_COMPLETION;
	if (result < 0)
		return RPMA_CL_E_PROVIDER;
	if (result > num_entries)
		return RPMA_CL_E_UNKNOWN;
	if (num_entries_got != NULL)
		*num_entries_got = result;
	return RPMA_CL_OK;
}

/* The loops rpma_stubnic_cloop runs. */
enum {
	RPMA_CL_WRITE_POLL = 0, /* rpma_write (ALWAYS) + rpma_cq_get_wc, per operation */
	RPMA_CL_READ_POLL = 1,  /* rpma_read (ALWAYS) + rpma_cq_get_wc */
	RPMA_CL_PHASED = 2,     /* batches: rpma_write x batch, then rpma_cq_get_wc x batch, each timed */
	RPMA_CL_RAW = 3,        /* bare ibv_post_send + ibv_poll_cq, no librpma layer */
	RPMA_CL_NOTIFY = 4,     /* ibv_req_notify_cq */
	RPMA_CL_WRITE_FLUSH = 5, /* rpma_write (ON_ERROR) + emulated rpma_flush (8-byte read, ALWAYS) + get_wc */
	RPMA_CL_FLUSH = 6,       /* emulated rpma_flush (ALWAYS) + get_wc */
	RPMA_CL_ATOMIC_WRITE = 7, /* emulated rpma_atomic_write (ALWAYS) + get_wc */
	RPMA_CL_SEND = 8         /* rpma_send (ALWAYS) + get_wc */
};

/*
 * The outcome of a loop: its time and, when perf_fd >= 0 (a counter of
 * user-space instructions on this thread), its instructions, in total and
 * for the posts and polls of RPMA_CL_PHASED; err is the first failure
 * (then the loop stopped).
 */
struct rpma_cl_result {
	int64_t ns, post_ns, poll_ns;
	int64_t insns, post_insns, poll_insns;
	int err;
};

static inline int64_t rpma_cl_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t rpma_cl_insns(int fd) {
	uint64_t v = 0;
	if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return (int64_t)v;
}

/*
 * rpma_stubnic_cloop runs iters operations of kind on n, librpma's way,
 * with 64-byte transfers between two local buffers (the stub copies
 * nothing: the addresses only travel).
 */
static struct rpma_cl_result rpma_stubnic_cloop(struct rpma_stubnic *n, int kind, int64_t iters, int batch, int perf_fd) {
	static char src_buf[128], dst_buf[128], flush_buf[8];
	struct ibv_mr src_ibv = { .addr = src_buf, .length = sizeof(src_buf), .lkey = 1, .rkey = 1 };
	struct ibv_mr flush_ibv = { .addr = flush_buf, .length = sizeof(flush_buf), .lkey = 2, .rkey = 2 };
	struct rpma_cl_mr src = { .ibv_mr = &src_ibv, .usage = 0 };
	struct rpma_cl_mr fbuf = { .ibv_mr = &flush_ibv, .usage = 0 };
	struct rpma_cl_mr_remote dst = { .raddr = (uint64_t)(uintptr_t)dst_buf, .size = sizeof(dst_buf), .rkey = 3 };
	struct rpma_cl_id id = { .qp = &n->qp };
	struct rpma_cl_cq cq = { .channel = NULL, .cq = &n->cq };
	struct rpma_cl_conn conn = { .id = &id, .cq = &cq };
	struct rpma_cl_result r;
	struct ibv_wc wc;
	memset(&r, 0, sizeof(r));
	if (batch < 1 || (uint32_t)batch > n->depth)
		batch = 1;
	int64_t t0 = rpma_cl_now(), i0 = rpma_cl_insns(perf_fd);
	for (int64_t i = 0; i < iters && !r.err; i++) {
		void *ctx = (void *)(uintptr_t)i;
		switch (kind) {
		case RPMA_CL_WRITE_POLL:
			r.err = rpma_cl_write(&conn, &dst, 0, &src, 0, 64, RPMA_CL_F_ALWAYS, ctx);
			if (!r.err)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			break;
		case RPMA_CL_READ_POLL:
			r.err = rpma_cl_read(&conn, &src, 0, &dst, 64, 64, RPMA_CL_F_ALWAYS, ctx);
			if (!r.err)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			break;
		case RPMA_CL_PHASED: {
			int64_t b = iters - i < batch ? iters - i : batch;
			int64_t ta = rpma_cl_now(), ia = rpma_cl_insns(perf_fd);
			for (int64_t k = 0; k < b && !r.err; k++)
				r.err = rpma_cl_write(&conn, &dst, 0, &src, 0, 64, RPMA_CL_F_ALWAYS, (void *)(uintptr_t)(i + k));
			int64_t tb = rpma_cl_now(), ib = rpma_cl_insns(perf_fd);
			for (int64_t k = 0; k < b && !r.err; k++)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			int64_t tc = rpma_cl_now(), ic = rpma_cl_insns(perf_fd);
			r.post_ns += tb - ta;
			r.poll_ns += tc - tb;
			r.post_insns += ib - ia;
			r.poll_insns += ic - ib;
			i += b - 1;
			break;
		}
		case RPMA_CL_RAW: {
			struct ibv_sge sge = { .addr = (uint64_t)(uintptr_t)src_buf, .length = 64, .lkey = 1 };
			struct ibv_send_wr wr, *bad;
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = (uint64_t)i;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)dst_buf;
			wr.wr.rdma.rkey = 3;
			if (ibv_post_send(&n->qp, &wr, &bad))
				r.err = RPMA_CL_E_PROVIDER;
			else if (ibv_poll_cq(&n->cq, 1, &wc) != 1)
				r.err = RPMA_CL_E_NO_COMPLETION;
			break;
		}
		case RPMA_CL_NOTIFY:
			if (ibv_req_notify_cq(&n->cq, 0))
				r.err = RPMA_CL_E_PROVIDER;
			break;
		case RPMA_CL_WRITE_FLUSH:
			r.err = rpma_cl_write(&conn, &dst, 0, &src, 0, 64, RPMA_CL_F_ON_ERROR, ctx);
			if (!r.err)
				r.err = rpma_cl_flush(&conn, &dst, 0, 64, 0, RPMA_CL_F_ALWAYS, ctx, &fbuf);
			if (!r.err)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			break;
		case RPMA_CL_FLUSH:
			r.err = rpma_cl_flush(&conn, &dst, 0, 64, 0, RPMA_CL_F_ALWAYS, ctx, &fbuf);
			if (!r.err)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			break;
		case RPMA_CL_ATOMIC_WRITE: {
			char word[8] = { (char)i };
			r.err = rpma_cl_atomic_write(&conn, &dst, 8, word, RPMA_CL_F_ALWAYS, ctx);
			if (!r.err)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			break;
		}
		case RPMA_CL_SEND:
			r.err = rpma_cl_send(&conn, &src, 0, 64, RPMA_CL_F_ALWAYS, ctx);
			if (!r.err)
				r.err = rpma_cl_cq_get_wc(conn.cq, 1, &wc, NULL);
			break;
		default:
			r.err = RPMA_CL_E_INVAL;
		}
		if (!r.err && kind != RPMA_CL_NOTIFY && kind != RPMA_CL_PHASED &&
				(wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i))
			r.err = RPMA_CL_E_UNKNOWN;
	}
	r.insns = rpma_cl_insns(perf_fd) - i0;
	r.ns = rpma_cl_now() - t0;
	return r;
}

#endif
