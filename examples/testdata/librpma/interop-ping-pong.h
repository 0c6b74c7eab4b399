/*
 * interop-ping-pong.h -- the completion loop of example 08 (librpma's
 * wait_and_process_completions), for the interop test's C programs
 */
#ifndef INTEROP_PING_PONG_H
#define INTEROP_PING_PONG_H

#include "interop-common.h"

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

#endif /* INTEROP_PING_PONG_H */
