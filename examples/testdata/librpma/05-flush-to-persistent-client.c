// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/05-flush-to-persistent/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 05-flush-to-persistent-client.c -- the client of librpma's example 05 on
 * C librpma, DRAM only, for the interop test
 *
 *	client <server_address> <port> [<pmem-path> [<pmem-offset>]]
 *
 * It prints "Next value: Hello world!", connects, applies the server's peer
 * configuration from common_data, RDMA-writes the whole 1 KiB greeting at
 * the server's data_offset, flushes it (PERSISTENT if the server declares
 * direct write to PMem, else VISIBILITY; op context 0xF01D), translates its
 * greeting and hangs up. The optional arguments are accepted and ignored.
 */
#include "interop-common.h"

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port> "
				"[<pmem-path> [<pmem-offset>]]\n", argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct ibv_wc wc;
	int ret;

	fprintf(stderr, "No <pmem-path> provided. Using DRAM instead.\n");
	struct hello_t *hello = malloc_aligned(sizeof(struct hello_t));
	if (hello == NULL)
		return -1;
	size_t data_offset = 0;
	write_hello_str(hello, en);
	printf("Next value: %s\n", hello->str);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;

	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_peer_delete;

	if ((ret = rpma_mr_reg(peer, hello, sizeof(struct hello_t),
			RPMA_MR_USAGE_WRITE_SRC, &src_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_conn_disconnect;
	}

	/* the server's common_data */
	struct rpma_conn_private_data pdata;
	if ((ret = rpma_conn_get_private_data(conn, &pdata))) {
		FAIL("rpma_conn_get_private_data", ret);
		goto err_mr_dereg;
	}
	if (pdata.ptr == NULL || pdata.len < sizeof(struct common_data)) {
		fprintf(stderr, "received connection's private data is too "
				"small (%u < %zu)\n", pdata.len,
				sizeof(struct common_data));
		ret = -1;
		goto err_mr_dereg;
	}
	struct common_data *dst_data = pdata.ptr;

	/* the server's peer configuration: may it be flushed to persistence? */
	if ((ret = rpma_peer_cfg_from_descriptor(
			&dst_data->descriptors[dst_data->mr_desc_size],
			dst_data->pcfg_desc_size, &pcfg))) {
		FAIL("rpma_peer_cfg_from_descriptor", ret);
		goto err_mr_dereg;
	}
	bool direct_write_to_pmem = false;
	(void) rpma_peer_cfg_get_direct_write_to_pmem(pcfg,
			&direct_write_to_pmem);
	ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg);
	(void) rpma_peer_cfg_delete(&pcfg);
	if (ret) {
		FAIL("rpma_conn_apply_remote_peer_cfg", ret);
		goto err_mr_dereg;
	}

	/* the server's memory */
	if ((ret = rpma_mr_remote_from_descriptor(&dst_data->descriptors[0],
			dst_data->mr_desc_size, &dst_mr))) {
		FAIL("rpma_mr_remote_from_descriptor", ret);
		goto err_mr_dereg;
	}
	size_t dst_offset = dst_data->data_offset;
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

	if ((ret = rpma_write(conn, dst_mr, dst_offset, src_mr,
			data_offset + HELLO_STR_OFFSET, KILOBYTE,
			RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		FAIL("rpma_write", ret);
		goto err_mr_remote_delete;
	}

	enum rpma_flush_type flush_type;
	if (direct_write_to_pmem) {
		flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
		printf("RPMA_FLUSH_TYPE_PERSISTENT is supported\n");
	} else {
		flush_type = RPMA_FLUSH_TYPE_VISIBILITY;
		printf("RPMA_FLUSH_TYPE_PERSISTENT is NOT supported, "
			"RPMA_FLUSH_TYPE_VISIBILITY is used instead\n");
	}
	if ((ret = rpma_flush(conn, dst_mr, dst_offset, KILOBYTE, flush_type,
			RPMA_F_COMPLETION_ALWAYS, FLUSH_ID))) {
		FAIL("rpma_flush", ret);
		goto err_mr_remote_delete;
	}

	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_mr_remote_delete;
	}
	if ((ret = wait_for_one_wc(cq, &wc)))
		goto err_mr_remote_delete;
	if (wc.wr_id != (uintptr_t)FLUSH_ID) {
		fprintf(stderr, "unexpected wc.wr_id value "
				"(0x%" PRIXPTR " != 0x%" PRIXPTR ")\n",
				(uintptr_t)wc.wr_id, (uintptr_t)FLUSH_ID);
		ret = -1;
		goto err_mr_remote_delete;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rpma_flush() failed: %s\n",
				ibv_wc_status_str(wc.status));
		ret = -1;
		goto err_mr_remote_delete;
	}

	/* the greeting is in the server's memory: change ours */
	translate(hello);
	printf("Translation: %s\n", hello->str);

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&dst_mr);
err_mr_dereg:
	(void) rpma_mr_dereg(&src_mr);
err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(hello);
	return ret;
}
