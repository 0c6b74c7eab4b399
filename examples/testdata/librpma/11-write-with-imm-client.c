// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2021-2022, Intel Corporation */
/* Copyright (c) 2021 Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/11-write-with-imm/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 11-write-with-imm-client.c -- the client of librpma's example 11 on
 * C librpma, DRAM only, for the interop test
 *
 *	client <server_address> <port> <imm>
 *
 * It takes the server's write destination from common_data, puts <imm> (a
 * uint32, host order) in the first 4 bytes of its own zeroed 1 KiB buffer
 * and writes all of it at the server's data_offset with <imm> as immediate
 * data ("Writing value '<v>' with immediate data '<imm>'"). After the
 * write's completion it hangs up.
 */
#include "interop-common.h"

int
main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <server_address> <port> <imm>\n",
				argv[0]);
		return -1;
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];
	uint32_t imm;
	if (parse_imm(argv[3], &imm))
		return -1;

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	char *src = malloc_aligned(KILOBYTE);
	if (src == NULL)
		return -1;

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;
	if ((ret = rpma_mr_reg(peer, src, KILOBYTE, RPMA_MR_USAGE_WRITE_SRC,
			&src_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_mr_dereg;

	/* the server's destination */
	size_t dst_offset = 0;
	if ((ret = remote_mr_from_common_data(conn, &dst_mr, &dst_offset)))
		goto err_conn_disconnect;
	size_t dst_size = 0;
	(void) rpma_mr_remote_get_size(dst_mr, &dst_size);
	if (dst_size < dst_offset || dst_size - dst_offset < KILOBYTE) {
		fprintf(stderr, "Remote memory region size too small for "
				"writing the data of the assumed size "
				"(%zu < %d)\n", dst_size - dst_offset,
				KILOBYTE);
		ret = -1;
		goto err_mr_remote_delete;
	}

	/* the value first, then zeros */
	memcpy(src, &imm, sizeof(imm));
	uint32_t value;
	memcpy(&value, src, sizeof(value));
	printf("Writing value '%u' with immediate data '%u'\n", value, imm);
	if ((ret = rpma_write_with_imm(conn, dst_mr, dst_offset, src_mr, 0,
			KILOBYTE, RPMA_F_COMPLETION_ALWAYS, imm, NULL))) {
		FAIL("rpma_write_with_imm", ret);
		goto err_mr_remote_delete;
	}
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_mr_remote_delete;
	}
	ret = wait_for_imm_wc(cq, IBV_WC_RDMA_WRITE, &wc);

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&dst_mr);
err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_mr_dereg:
	(void) rpma_mr_dereg(&src_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(src);
	return ret;
}
