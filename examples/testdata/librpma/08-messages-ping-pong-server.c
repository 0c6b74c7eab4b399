// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/08-messages-ping-pong/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 08-messages-ping-pong-server.c -- the server of librpma's example 08 on
 * C librpma, for the interop test
 *
 *	server <server_address> <port>
 *
 * It posts a receive (8 bytes, op context = the receive buffer's address)
 * before accepting, then answers every counter with the counter plus one
 * ("Value received: N", "Value sent: N+1") until it receives UINT64_MAX,
 * and then hangs up.
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
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
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

	if ((ret = rpma_ep_next_conn_req(ep, NULL, &req))) {
		FAIL("rpma_ep_next_conn_req", ret);
		goto err_mr_dereg;
	}
	/* the client sends as soon as it is connected */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, recv))) {
		FAIL("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_mr_dereg;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &conn))) {
		FAIL("rpma_conn_req_connect", ret);
		goto err_mr_dereg;
	}
	if ((ret = expect_event(conn, RPMA_CONN_ESTABLISHED)))
		goto err_conn_delete;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_delete;
	}

	/* no send is outstanding in the first round */
	int send_cmpl = 1;
	int recv_cmpl = 0;
	while (1) {
		if ((ret = wait_and_process_completions(cq, recv, &send_cmpl,
				&recv_cmpl)))
			break;
		if (*recv == I_M_DONE)
			break;
		printf("Value received: %" PRIu64 "\n", *recv);
		*send = *recv + 1;
		send_cmpl = 0;
		recv_cmpl = 0;
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv))) {
			FAIL("rpma_recv", ret);
			break;
		}
		printf("Value sent: %" PRIu64 "\n", *send);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
				RPMA_F_COMPLETION_ALWAYS, NULL))) {
			FAIL("rpma_send", ret);
			break;
		}
	}

	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
	goto err_mr_dereg;

err_conn_delete:
	(void) rpma_conn_delete(&conn);
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
