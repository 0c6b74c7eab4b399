/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright 2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/common/common-utils.c
 *   examples/common/common-messages-ping-pong.c
 *   examples/12-receive-completion-queue/receive-completion-queue-common.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * interop-ping-pong.h -- what the ping-pong examples (08, 12, 13) share,
 * for the interop test's C programs: the clients' numeric arguments, the
 * completion loop of 08 and 13's client (librpma's
 * wait_and_process_completions) and 12's one-completion wait (librpma's
 * get_wc_and_validate)
 */
#ifndef INTEROP_PING_PONG_H
#define INTEROP_PING_PONG_H

#include <errno.h>

#include "interop-common.h"

/* librpma's strtoul_noerror: "abc" is 0, "-1" is 2^64-1, "12x" is 12 */
static inline int
strtoul_noerror(const char *in, uint64_t *out)
{
	errno = 0;
	unsigned long v = strtoul(in, NULL, 10);
	if (errno == ERANGE) {
		fprintf(stderr, "strtoul(%s) overflowed\n", in);
		return -1;
	}
	*out = v;
	return 0;
}

/* at most a send and a receive completion are outstanding */
#define MAX_N_WC 2

/*
 * Collect completions until the send (unless *send_cmpl is already set)
 * and one receive have completed; the receive must carry recv (the receive
 * buffer's address, its op context) and exactly MSG_SIZE bytes.
 */
static inline int
wait_and_process_completions(struct rpma_cq *cq, uint64_t *recv,
		int *send_cmpl, int *recv_cmpl)
{
	struct ibv_wc wc[MAX_N_WC];
	int num_got = 0;
	int ret;

	do {
		if ((ret = rpma_cq_wait(cq))) {
			FAIL("rpma_cq_wait", ret);
			return ret;
		}
		ret = rpma_cq_get_wc(cq, MAX_N_WC, wc, &num_got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret) {
			FAIL("rpma_cq_get_wc", ret);
			return ret;
		}
		for (int i = 0; i < num_got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_%s() failed: %s\n",
					wc[i].opcode == IBV_WC_SEND ?
						"send" : "recv",
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
			if (wc[i].opcode == IBV_WC_SEND) {
				*send_cmpl = 1;
			} else if (wc[i].opcode == IBV_WC_RECV) {
				if (wc[i].wr_id != (uintptr_t)recv ||
						wc[i].byte_len != MSG_SIZE) {
					fprintf(stderr, "received completion "
						"is not as expected (0x%"
						PRIXPTR " != 0x%" PRIXPTR
						" [wc.wr_id] || %" PRIu32
						" != %zu [wc.byte_len])\n",
						(uintptr_t)wc[i].wr_id,
						(uintptr_t)recv,
						wc[i].byte_len, MSG_SIZE);
					return -1;
				}
				*recv_cmpl = 1;
			}
		}
	} while (*send_cmpl == 0 || *recv_cmpl == 0);

	return 0;
}

/* 12's RCQ_SIZE: the receive CQ of both sides' connections */
#define RCQ_SIZE 10

/*
 * 12's get_wc_and_validate: wait for one completion on cq and check its
 * status and opcode (name is the operation, as "rpma_recv()"). Stricter
 * than librpma's, which checks no more: a receive must also carry exactly
 * MSG_SIZE bytes, so that a peer sending more or less fails here.
 */
static inline int
get_wc_and_validate(struct rpma_cq *cq, enum ibv_wc_opcode opcode,
		const char *name)
{
	struct ibv_wc wc;
	int ret = wait_for_one_wc(cq, &wc);
	if (ret)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s failed: %s\n", name,
				ibv_wc_status_str(wc.status));
		return -1;
	}
	if (wc.opcode != opcode) {
		fprintf(stderr, "unexpected wc.opcode value "
				"(0x%" PRIXPTR " != 0x%" PRIXPTR ")\n",
				(uintptr_t)wc.opcode, (uintptr_t)opcode);
		return -1;
	}
	if (opcode == IBV_WC_RECV && wc.byte_len != MSG_SIZE) {
		fprintf(stderr, "%s received %" PRIu32 " bytes, not %zu\n",
				name, wc.byte_len, MSG_SIZE);
		return -1;
	}
	return 0;
}

#endif /* INTEROP_PING_PONG_H */
