// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/02-read-to-volatile/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 02-read-to-volatile-client.c -- the client of librpma's example 02 on
 * C librpma, DRAM only, for the interop test
 *
 *	client <server_address> <port>
 *
 * It connects, takes the server's memory region from common_data, reads
 * all of it (at most 1 KiB) with one RDMA read into zeroed DRAM, prints
 * "Read a message: <what it read>" and hangs up.
 */
#include "interop-common.h"

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
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	char *dst = malloc_aligned(KILOBYTE);
	if (dst == NULL)
		return -1;

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;

	if ((ret = rpma_mr_reg(peer, dst, KILOBYTE, RPMA_MR_USAGE_READ_DST,
			&dst_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_mr_dereg;

	/* the server's memory: all of it is read */
	size_t src_offset = 0;
	if ((ret = remote_mr_from_common_data(conn, &src_mr, &src_offset)))
		goto err_conn_disconnect;
	size_t src_size = 0;
	(void) rpma_mr_remote_get_size(src_mr, &src_size);
	if (src_size > KILOBYTE) {
		fprintf(stderr, "Remote memory region size too big to reading "
				"to the sink buffer of the assumed size "
				"(%zu > %d)\n", src_size, KILOBYTE);
		ret = -1;
		goto err_mr_remote_delete;
	}

	if ((ret = rpma_read(conn, dst_mr, 0, src_mr, 0, src_size,
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		FAIL("rpma_read", ret);
		goto err_mr_remote_delete;
	}
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_mr_remote_delete;
	}
	if ((ret = wait_for_one_wc(cq, &wc)))
		goto err_mr_remote_delete;
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rpma_read() failed: %s\n",
				ibv_wc_status_str(wc.status));
		ret = -1;
		goto err_mr_remote_delete;
	}
	if (wc.opcode != IBV_WC_RDMA_READ) {
		fprintf(stderr, "unexpected wc.opcode value (%d != %d)\n",
				wc.opcode, IBV_WC_RDMA_READ);
		ret = -1;
		goto err_mr_remote_delete;
	}

	/* a string, unless the server filled all 1 KiB */
	printf("Read a message: %.*s\n", KILOBYTE, dst);

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&src_mr);
err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_mr_dereg:
	(void) rpma_mr_dereg(&dst_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(dst);
	return ret;
}
