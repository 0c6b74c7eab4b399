// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/07-atomic-write/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 07-atomic-write-client.c -- the client of librpma's example 07 on C
 * librpma, for the interop test
 *
 *	client <server_address> <port> <word1> [<word2>] [..]
 *
 * It reads the server's log's "used" (8 bytes at data_offset) and prints
 * "used value: N"; then, for each word: writes the word and its NUL at
 * used, flushes it, atomically writes the new used at data_offset
 * (rpma_atomic_write) and flushes that (op context 0xF01D), waiting for the
 * last flush's completion. It flushes to persistence if the server's memory
 * region allows it (having declared the server's direct write to PMem on
 * its own, as librpma's example does), else to visibility.
 */
#include "interop-common.h"

#define MAX_WORD_LENGTH (KILOBYTE - 1)

static int
wait_for_flush(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	int ret = wait_for_one_wc(cq, &wc);
	if (ret)
		return ret;
	if (wc.wr_id != (uintptr_t)FLUSH_ID) {
		fprintf(stderr, "unexpected wc.wr_id value "
				"(0x%" PRIXPTR " != 0x%" PRIXPTR ")\n",
				(uintptr_t)wc.wr_id, (uintptr_t)FLUSH_ID);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rpma_flush() failed: %s\n",
				ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <server_address> <port> <word1> "
				"[<word2>] [..]\n", argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	char *mr_ptr = malloc_aligned(KILOBYTE);
	if (mr_ptr == NULL)
		return -2;

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;
	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_peer_delete;

	/* the server declares nothing: take it as writing directly to PMem */
	if ((ret = rpma_peer_cfg_new(&pcfg))) {
		FAIL("rpma_peer_cfg_new", ret);
		goto err_conn_disconnect;
	}
	if ((ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true))) {
		FAIL("rpma_peer_cfg_set_direct_write_to_pmem", ret);
		goto err_pcfg_delete;
	}
	if ((ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg))) {
		FAIL("rpma_conn_apply_remote_peer_cfg", ret);
		goto err_pcfg_delete;
	}

	if ((ret = rpma_mr_reg(peer, mr_ptr, KILOBYTE,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST,
			&src_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_pcfg_delete;
	}

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
	if ((ret = rpma_mr_remote_from_descriptor(&dst_data->descriptors[0],
			dst_data->mr_desc_size, &dst_mr))) {
		FAIL("rpma_mr_remote_from_descriptor", ret);
		goto err_mr_dereg;
	}
	size_t used_offset = dst_data->data_offset;
	size_t dst_size = 0;
	(void) rpma_mr_remote_get_size(dst_mr, &dst_size);
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_mr_remote_delete;
	}

	/* where the log ends */
	if ((ret = rpma_read(conn, src_mr, 0, dst_mr, used_offset,
			sizeof(uint64_t), RPMA_F_COMPLETION_ALWAYS, NULL))) {
		FAIL("rpma_read", ret);
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
	uint64_t used;
	memcpy(&used, mr_ptr, sizeof(used));
	printf("used value: %" PRIu64 "\n", used);
	if (dst_size <= used) {
		fprintf(stderr, "Log size exhausted.\n");
		ret = -1;
		goto err_mr_remote_delete;
	}

	int flush_type = 0;
	(void) rpma_mr_remote_get_flush_type(dst_mr, &flush_type);
	enum rpma_flush_type type =
		(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ?
		RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;

	for (int i = 3; i < argc; i++) {
		/* the word and its NUL at the end of the log */
		strncpy(mr_ptr, argv[i], MAX_WORD_LENGTH);
		mr_ptr[MAX_WORD_LENGTH] = '\0';
		size_t size = strlen(mr_ptr) + 1;
		if ((ret = rpma_write(conn, dst_mr, used, src_mr, 0, size,
				RPMA_F_COMPLETION_ON_ERROR, NULL))) {
			FAIL("rpma_write", ret);
			break;
		}
		if ((ret = rpma_flush(conn, dst_mr, used, size, type,
				RPMA_F_COMPLETION_ON_ERROR, NULL))) {
			FAIL("rpma_flush", ret);
			break;
		}

		/* then, atomically, the new end of the log */
		used += size;
		char used_le[RPMA_ATOMIC_WRITE_ALIGNMENT];
		memcpy(used_le, &used, sizeof(used));
		if ((ret = rpma_atomic_write(conn, dst_mr, used_offset,
				used_le, RPMA_F_COMPLETION_ON_ERROR, NULL))) {
			FAIL("rpma_atomic_write", ret);
			break;
		}
		if ((ret = rpma_flush(conn, dst_mr, used_offset,
				sizeof(uint64_t), type,
				RPMA_F_COMPLETION_ALWAYS, FLUSH_ID))) {
			FAIL("rpma_flush", ret);
			break;
		}
		if ((ret = wait_for_flush(cq)))
			break;
	}

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&dst_mr);
err_mr_dereg:
	(void) rpma_mr_dereg(&src_mr);
err_pcfg_delete:
	(void) rpma_peer_cfg_delete(&pcfg);
err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(mr_ptr);
	return ret ? -2 : 0;
}
