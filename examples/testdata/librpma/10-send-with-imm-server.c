// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2021-2022, Intel Corporation */
/* Copyright (c) 2020-2021 Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/10-send-with-imm/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 10-send-with-imm-server.c -- the server of librpma's example 10 on
 * C librpma, for the interop test
 *
 *	server <server_address> <port>
 *
 * It posts a 1 KiB receive before accepting (the client sends as soon as it
 * is connected), takes the expected immediate value from the client's
 * private data (a host-order uint32), and checks that the client's send
 * with immediate data completes the receive (IBV_WC_RECV with
 * IBV_WC_WITH_IMM) carrying that value. It prints "Received value '<word>'
 * with immediate data '<imm>'" (an empty word for a 0-byte send) and waits
 * for the client to hang up.
 */
#include "interop-common.h"

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port>\n",
				argv[0]);
		return -1;
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *recv_mr = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	char *recv = malloc_aligned(KILOBYTE);
	if (recv == NULL)
		return -1;

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;
	if ((ret = rpma_mr_reg(peer, recv, KILOBYTE, RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_mr_dereg;
	}

	if ((ret = rpma_ep_next_conn_req(ep, NULL, &req))) {
		FAIL("rpma_ep_next_conn_req", ret);
		goto err_ep_shutdown;
	}
	/* the receive the client's send with immediate data completes */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, KILOBYTE, NULL))) {
		FAIL("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &conn))) {
		FAIL("rpma_conn_req_connect", ret);
		goto err_ep_shutdown;
	}
	if ((ret = expect_event(conn, RPMA_CONN_ESTABLISHED))) {
		(void) rpma_conn_delete(&conn);
		goto err_ep_shutdown;
	}

	/* the immediate value the client announced */
	struct rpma_conn_private_data pdata;
	if ((ret = rpma_conn_get_private_data(conn, &pdata))) {
		FAIL("rpma_conn_get_private_data", ret);
		goto err_conn_close;
	}
	if (pdata.ptr == NULL || pdata.len < sizeof(uint32_t)) {
		fprintf(stderr, "Received connection's private data is too "
				"small (%u < %zu)\n", pdata.len,
				sizeof(uint32_t));
		ret = -1;
		goto err_conn_close;
	}
	uint32_t exp_imm;
	memcpy(&exp_imm, pdata.ptr, sizeof(exp_imm));

	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_close;
	}
	if ((ret = wait_for_imm_wc(cq, IBV_WC_RECV, &wc)))
		goto err_conn_close;
	if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
		fprintf(stderr, "Received unexpected completion flag "
				"(no IBV_WC_WITH_IMM)\n");
		ret = -1;
		goto err_conn_close;
	}
	uint32_t imm = ntohl(wc.imm_data);
	if (imm != exp_imm) {
		fprintf(stderr, "Received unexpected immediate data "
				"(%u != %u)\n", imm, exp_imm);
		ret = -1;
		goto err_conn_close;
	}
	if (wc.byte_len == 0)
		recv[0] = '\0';
	/* a string, unless the client filled all 1 KiB */
	printf("Received value '%.*s' with immediate data '%u'\n",
			KILOBYTE, recv, imm);

err_conn_close:
	{
		/* the client hangs up */
		int ret2 = wait_for_conn_close_and_disconnect(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_mr_dereg:
	(void) rpma_mr_dereg(&recv_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(recv);
	return ret;
}
