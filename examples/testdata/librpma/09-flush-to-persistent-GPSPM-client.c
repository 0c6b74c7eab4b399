// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/09-flush-to-persistent-GPSPM/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 09-flush-to-persistent-GPSPM-client.c -- the client of librpma's example
 * 09 on C librpma, DRAM only, for the interop test
 *
 *	client <server_address> <port> [<pmem-path> [<pmem-offset>]]
 *
 * It prints "Next value: Hello world!", connects with a receive CQ of one
 * entry, RDMA-writes the whole 1 KiB greeting at the server's data_offset,
 * posts a 512-byte receive for the response and sends a protobuf-c
 * GPSPM_flush_request {offset: data_offset, length: 1024, op_context:
 * 0xF01D}. It waits for the send's completion, then for the response on
 * the receive CQ, decoded from exactly the received bytes, whose
 * op_context must be 0xF01D; then it translates its greeting ("Translation:
 * ...") and hangs up. The optional arguments are accepted and ignored.
 */
#include "interop-gpspm.h"

/* have the server persist [offset, offset + length) with a flush request */
static int
flush_request(struct rpma_conn *conn, struct rpma_mr_local *msg_mr,
		char *msg, uint64_t offset, uint64_t length)
{
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct ibv_wc wc;
	int ret;

	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		return ret;
	}
	if ((ret = rpma_conn_get_rcq(conn, &rcq))) {
		FAIL("rpma_conn_get_rcq", ret);
		return ret;
	}

	/* the receive for the response, before the request leaves */
	if ((ret = rpma_recv(conn, msg_mr, RECV_OFFSET, MSG_SIZE_MAX, NULL))) {
		FAIL("rpma_recv", ret);
		return ret;
	}

	GPSPMFlushRequest req = GPSPM_FLUSH_REQUEST__INIT;
	req.offset = offset;
	req.length = length;
	req.op_context = (uint64_t)(uintptr_t)FLUSH_ID;
	size_t req_size = gpspm_flush_request__get_packed_size(&req);
	if (req_size > MSG_SIZE_MAX) {
		fprintf(stderr, "packed flush request too large (%zu > %d)\n",
				req_size, MSG_SIZE_MAX);
		return -1;
	}
	(void) gpspm_flush_request__pack(&req, (uint8_t *)msg + SEND_OFFSET);
	if ((ret = rpma_send(conn, msg_mr, SEND_OFFSET, req_size,
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		FAIL("rpma_send", ret);
		return ret;
	}

	/* the send completes on the main CQ, the response on the RCQ */
	if ((ret = wait_for_wc_of(cq, IBV_WC_SEND, "rpma_send()", &wc)))
		return ret;
	if ((ret = wait_for_wc_of(rcq, IBV_WC_RECV, "rpma_recv()", &wc)))
		return ret;
	GPSPMFlushResponse *resp = gpspm_flush_response__unpack(NULL,
			wc.byte_len, (const uint8_t *)msg + RECV_OFFSET);
	if (resp == NULL) {
		fprintf(stderr, "Cannot unpack the flush response buffer\n");
		return -1;
	}
	uint64_t op_context = resp->op_context;
	gpspm_flush_response__free_unpacked(resp, NULL);
	if (op_context != (uint64_t)(uintptr_t)FLUSH_ID) {
		fprintf(stderr, "unexpected flush_resp->op_context value "
				"(0x%" PRIX64 " != 0x%" PRIXPTR ")\n",
				op_context, (uintptr_t)FLUSH_ID);
		return -1;
	}
	return 0;
}

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
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL, *msg_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	int ret;

	fprintf(stderr, "No <pmem-path> provided. Using DRAM instead.\n");
	struct hello_t *hello = malloc_aligned(sizeof(struct hello_t));
	char *msg = malloc_aligned(MSG_BUFFER_SIZE);
	if (hello == NULL || msg == NULL) {
		free(hello);
		free(msg);
		return -1;
	}
	size_t data_offset = 0;
	write_hello_str(hello, en);
	printf("Next value: %s\n", hello->str);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;
	if ((ret = gpspm_conn_cfg_new(&cfg)))
		goto err_peer_delete;
	if ((ret = client_connect(peer, addr, port, cfg, NULL, &conn)))
		goto err_cfg_delete;

	if ((ret = rpma_mr_reg(peer, hello, sizeof(struct hello_t),
			RPMA_MR_USAGE_WRITE_SRC, &src_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_conn_disconnect;
	}
	if ((ret = rpma_mr_reg(peer, msg, MSG_BUFFER_SIZE,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &msg_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}

	/* the server's common_data: its memory region and data_offset */
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
	size_t dst_offset = dst_data->data_offset;
	size_t dst_size = 0;
	(void) rpma_mr_remote_get_size(dst_mr, &dst_size);
	if (dst_size < dst_offset || dst_size - dst_offset < HELLO_STR_SIZE) {
		fprintf(stderr, "Size of the remote memory region is too small "
				"for writing the data of the assumed size "
				"(%zu < %d)\n", dst_size - dst_offset,
				HELLO_STR_SIZE);
		ret = -1;
		goto err_mr_remote_delete;
	}

	/* the greeting; its completion comes only on error */
	if ((ret = rpma_write(conn, dst_mr, dst_offset, src_mr,
			data_offset + HELLO_STR_OFFSET, HELLO_STR_SIZE,
			RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		FAIL("rpma_write", ret);
		goto err_mr_remote_delete;
	}
	if ((ret = flush_request(conn, msg_mr, msg, dst_offset,
			HELLO_STR_SIZE)))
		goto err_mr_remote_delete;

	/* the greeting is persistent on the server: change ours */
	translate(hello);
	printf("Translation: %s\n", hello->str);

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&dst_mr);
err_mr_dereg:
	(void) rpma_mr_dereg(&msg_mr);
	(void) rpma_mr_dereg(&src_mr);
err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_cfg_delete:
	(void) rpma_conn_cfg_delete(&cfg);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(msg);
	free(hello);
	return ret ? -1 : 0;
}
