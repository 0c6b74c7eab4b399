// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/12-receive-completion-queue/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 12-receive-completion-queue-server.c -- the server of librpma's example
 * 12 on C librpma, for the interop test
 *
 *	server <server_address> <port>
 *
 * As 08's server, but the connection has a separate receive CQ
 * (rpma_conn_cfg_set_rcq_size(RCQ_SIZE) on both sides): receives complete
 * on the RCQ (rpma_conn_get_rcq), sends on the main CQ. It posts a receive
 * (8 bytes) before accepting; then, for each counter N the client sends
 * ("SERVER: Value received: N"), it posts the next receive, sends N+1
 * ("SERVER: Value sent: N+1") and waits for that send's completion, until
 * it receives UINT64_MAX; then it hangs up.
 */
#include "interop-ping-pong.h"

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port>\n",
				argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int ret;

	uint64_t *recv = malloc_aligned(MSG_SIZE);
	uint64_t *send = malloc_aligned(MSG_SIZE);
	if (recv == NULL || send == NULL) {
		free(recv);
		free(send);
		return -1;
	}

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, recv, MSG_SIZE, RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_ep_shutdown;
	}
	if ((ret = rpma_mr_reg(peer, send, MSG_SIZE, RPMA_MR_USAGE_SEND,
			&send_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}

	/* the connection's configuration: a receive CQ of its own */
	if ((ret = rpma_conn_cfg_new(&cfg))) {
		FAIL("rpma_conn_cfg_new", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_conn_cfg_set_rcq_size(cfg, RCQ_SIZE))) {
		FAIL("rpma_conn_cfg_set_rcq_size", ret);
		goto err_cfg_delete;
	}

	if ((ret = rpma_ep_next_conn_req(ep, cfg, &req))) {
		FAIL("rpma_ep_next_conn_req", ret);
		goto err_cfg_delete;
	}
	/* the client sends as soon as it is connected */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, recv))) {
		FAIL("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_cfg_delete;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &conn))) {
		FAIL("rpma_conn_req_connect", ret);
		goto err_cfg_delete;
	}
	if ((ret = expect_event(conn, RPMA_CONN_ESTABLISHED)))
		goto err_conn_delete;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_disconnect;
	}
	if ((ret = rpma_conn_get_rcq(conn, &rcq))) {
		FAIL("rpma_conn_get_rcq", ret);
		goto err_conn_disconnect;
	}
	if (rcq == NULL) {
		fprintf(stderr, "the connection has no receive CQ\n");
		ret = -1;
		goto err_conn_disconnect;
	}

	while (1) {
		/* the client's counter, on the receive CQ */
		if ((ret = get_wc_and_validate(rcq, IBV_WC_RECV, "rpma_recv()")))
			break;
		if (*recv == I_M_DONE)
			break;
		printf("SERVER: Value received: %" PRIu64 "\n", *recv);
		*send = *recv + 1;
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv))) {
			FAIL("rpma_recv", ret);
			break;
		}
		printf("SERVER: Value sent: %" PRIu64 "\n", *send);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
				RPMA_F_COMPLETION_ALWAYS, NULL))) {
			FAIL("rpma_send", ret);
			break;
		}
		/* its completion, on the main CQ */
		if ((ret = get_wc_and_validate(cq, IBV_WC_SEND, "rpma_send()")))
			break;
	}

err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
	goto err_cfg_delete;

err_conn_delete:
	(void) rpma_conn_delete(&conn);
err_cfg_delete:
	(void) rpma_conn_cfg_delete(&cfg);
err_mr_dereg:
	(void) rpma_mr_dereg(&send_mr);
	(void) rpma_mr_dereg(&recv_mr);
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(send);
	free(recv);
	return ret ? -1 : 0;
}
