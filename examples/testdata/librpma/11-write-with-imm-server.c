// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2021-2022, Intel Corporation */
/* Copyright (c) 2021 Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/11-write-with-imm/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 11-write-with-imm-server.c -- the server of librpma's example 11 on
 * C librpma, DRAM only, for the interop test
 *
 *	server <server_address> <port>
 *
 * It exposes 1 KiB of zeroed DRAM for remote writes (common_data with the
 * region's descriptor, data_offset 0) and posts a 1-byte receive before
 * accepting, which the client's write with immediate data consumes. The
 * completion must be IBV_WC_RECV_RDMA_WITH_IMM with IBV_WC_WITH_IMM, and its
 * immediate value must equal the uint32 (host order) the client wrote at the
 * start of the region. It prints "The value '<v>' was written together with
 * immediate data '<imm>'" and waits for the client to hang up.
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
	struct rpma_mr_local *dst_mr = NULL, *recv_mr = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	char *dst = malloc_aligned(KILOBYTE);
	char *recv = malloc_aligned(1);
	if (dst == NULL || recv == NULL) {
		free(dst);
		free(recv);
		return -1;
	}

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;
	if ((ret = rpma_mr_reg(peer, dst, KILOBYTE, RPMA_MR_USAGE_WRITE_DST,
			&dst_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, recv, 1, RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}

	/* common_data: the destination's descriptor, data_offset 0 */
	struct common_data data = {0};
	size_t mr_desc_size;
	(void) rpma_mr_get_descriptor_size(dst_mr, &mr_desc_size);
	data.mr_desc_size = (uint8_t)mr_desc_size;
	if ((ret = rpma_mr_get_descriptor(dst_mr, &data.descriptors[0]))) {
		FAIL("rpma_mr_get_descriptor", ret);
		goto err_mr_dereg;
	}
	struct rpma_conn_private_data pdata = {&data, sizeof(data)};

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_ep_next_conn_req(ep, NULL, &req))) {
		FAIL("rpma_ep_next_conn_req", ret);
		goto err_ep_shutdown;
	}
	/* the receive the client's write with immediate data consumes */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, 1, NULL))) {
		FAIL("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}
	if ((ret = rpma_conn_req_connect(&req, &pdata, &conn))) {
		FAIL("rpma_conn_req_connect", ret);
		goto err_ep_shutdown;
	}
	if ((ret = expect_event(conn, RPMA_CONN_ESTABLISHED))) {
		(void) rpma_conn_delete(&conn);
		goto err_ep_shutdown;
	}

	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_close;
	}
	if ((ret = wait_for_imm_wc(cq, IBV_WC_RECV_RDMA_WITH_IMM, &wc)))
		goto err_conn_close;
	if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
		fprintf(stderr, "Received an unexpected completion flag "
				"(no IBV_WC_WITH_IMM)\n");
		ret = -1;
		goto err_conn_close;
	}
	/* the value the client wrote comes first */
	uint32_t exp_imm;
	memcpy(&exp_imm, dst, sizeof(exp_imm));
	uint32_t imm = ntohl(wc.imm_data);
	if (imm != exp_imm) {
		fprintf(stderr, "Received unexpected immediate data "
				"(%u != %u)\n", imm, exp_imm);
		ret = -1;
		goto err_conn_close;
	}
	printf("The value '%u' was written together with immediate data "
			"'%u'\n", exp_imm, imm);

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
	(void) rpma_mr_dereg(&dst_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(recv);
	free(dst);
	return ret;
}
