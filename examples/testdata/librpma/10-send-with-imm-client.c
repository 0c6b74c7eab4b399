// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2021-2022, Intel Corporation */
/* Copyright (c) 2020-2021 Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/10-send-with-imm/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 10-send-with-imm-client.c -- the client of librpma's example 10 on
 * C librpma, for the interop test
 *
 *	client <server_address> <port> <imm> [word]
 *
 * It connects with <imm> (a uint32, host order) as its private data, so
 * that the server knows what to expect, then sends <word> in a 1 KiB buffer
 * with <imm> as immediate data ("Sending value '<word>' with immediate data
 * '<imm>'"), or without a word a 0-byte message with immediate data
 * ("Sending immediate data '<imm>'"). After the send's completion it hangs
 * up.
 */
#include "interop-common.h"

int
main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <server_address> <port> <imm> "
				"[word]\n", argv[0]);
		return -1;
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];
	uint32_t imm;
	if (parse_imm(argv[3], &imm))
		return -1;
	char *word = argc >= 5 ? argv[4] : NULL;

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *send_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	char *send = NULL;
	size_t len = 0;
	int ret;

	/* with a word: a 1 KiB send buffer; without one: no memory at all */
	if (word) {
		len = KILOBYTE;
		if ((send = malloc_aligned(len)) == NULL)
			return -1;
	}

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;
	if (word && (ret = rpma_mr_reg(peer, send, len, RPMA_MR_USAGE_SEND,
			&send_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	/* the immediate value the server is to expect */
	struct rpma_conn_private_data pdata = {&imm, sizeof(imm)};
	if ((ret = client_connect(peer, addr, port, NULL, &pdata, &conn)))
		goto err_mr_dereg;

	if (word) {
		printf("Sending value '%s' with immediate data '%u'\n", word,
				imm);
		strncpy(send, word, KILOBYTE - 1);
	} else {
		printf("Sending immediate data '%u'\n", imm);
	}
	if ((ret = rpma_send_with_imm(conn, send_mr, 0, len,
			RPMA_F_COMPLETION_ALWAYS, imm, NULL))) {
		FAIL("rpma_send_with_imm", ret);
		goto err_conn_disconnect;
	}
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_disconnect;
	}
	ret = wait_for_imm_wc(cq, IBV_WC_SEND, &wc);

err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_mr_dereg:
	(void) rpma_mr_dereg(&send_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(send);
	return ret;
}
