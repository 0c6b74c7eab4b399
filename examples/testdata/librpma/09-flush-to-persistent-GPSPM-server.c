// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/09-flush-to-persistent-GPSPM/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 09-flush-to-persistent-GPSPM-server.c -- the server of librpma's example
 * 09 on C librpma, DRAM only, for the interop test
 *
 *	server <server_address> <port> [<pmem-path>]
 *
 * It exposes 1 KiB of zeroed DRAM (data_offset 0) for remote writes in
 * common_data (the memory region's descriptor only), posts a 512-byte
 * receive before accepting, with a receive CQ of one entry, and waits for
 * the client's flush request, a protobuf-c GPSPM_flush_request decoded from
 * exactly the received bytes. It prints "Flush request received: {offset:
 * 0x.., length: 0x.., op_context: 0x..}", checks that the range lies in
 * its memory (there is nothing to persist in DRAM), answers with a
 * GPSPM_flush_response carrying the request's op_context, waits for the
 * client to hang up and prints "New value: <what the client wrote>".
 * The optional argument is accepted and ignored (no PMem here), and, as a
 * PMem-capable build of librpma's example running on DRAM, it prints no
 * line about persisting.
 */
#include "interop-gpspm.h"

/* answer the flush request that the posted receive gets */
static int
serve_flush(struct rpma_conn *conn, struct rpma_mr_local *msg_mr,
		char *msg, size_t mem_size)
{
	struct rpma_cq *rcq = NULL, *cq = NULL;
	struct ibv_wc wc;
	int ret;

	if ((ret = rpma_conn_get_rcq(conn, &rcq))) {
		FAIL("rpma_conn_get_rcq", ret);
		return ret;
	}
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		return ret;
	}

	/* the request arrives on the receive CQ */
	if ((ret = wait_for_wc_of(rcq, IBV_WC_RECV, "rpma_recv()", &wc)))
		return ret;
	GPSPMFlushRequest *req = gpspm_flush_request__unpack(NULL,
			wc.byte_len, (const uint8_t *)msg + RECV_OFFSET);
	if (req == NULL) {
		fprintf(stderr, "Cannot unpack the flush request buffer\n");
		return -1;
	}
	printf("Flush request received: {offset: 0x%" PRIX64
			", length: 0x%" PRIX64 ", op_context: 0x%" PRIX64 "}\n",
			req->offset, req->length, req->op_context);
	if (req->offset > mem_size || req->length > mem_size - req->offset) {
		fprintf(stderr, "flush request beyond the memory region "
				"(%" PRIu64 " + %" PRIu64 " > %zu)\n",
				req->offset, req->length, mem_size);
		gpspm_flush_request__free_unpacked(req, NULL);
		return -1;
	}

	/* the response: the request's op_context */
	GPSPMFlushResponse resp = GPSPM_FLUSH_RESPONSE__INIT;
	resp.op_context = req->op_context;
	gpspm_flush_request__free_unpacked(req, NULL);
	size_t resp_size = gpspm_flush_response__get_packed_size(&resp);
	if (resp_size > MSG_SIZE_MAX) {
		fprintf(stderr, "packed flush response too large "
				"(%zu > %d)\n", resp_size, MSG_SIZE_MAX);
		return -1;
	}
	(void) gpspm_flush_response__pack(&resp,
			(uint8_t *)msg + SEND_OFFSET);
	if ((ret = rpma_send(conn, msg_mr, SEND_OFFSET, resp_size,
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		FAIL("rpma_send", ret);
		return ret;
	}
	return wait_for_wc_of(cq, IBV_WC_SEND, "rpma_send()", &wc);
}

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port> "
				"[<pmem-path>]\n", argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *mr = NULL, *msg_mr = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret;

	fprintf(stderr, "No <pmem-path> provided. Using DRAM instead.\n");
	char *mem = malloc_aligned(KILOBYTE);
	char *msg = malloc_aligned(MSG_BUFFER_SIZE);
	if (mem == NULL || msg == NULL) {
		free(mem);
		free(msg);
		return -1;
	}
	size_t data_offset = 0;
	if (mem[data_offset] != '\0')
		printf("Old value: %s\n", mem + data_offset);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_peer_delete;
	}

	/* DRAM can be flushed to visibility only */
	if ((ret = rpma_mr_reg(peer, mem, KILOBYTE,
			RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_ep_shutdown;
	}
	/* the messaging buffer, registered as librpma's server does */
	if ((ret = rpma_mr_reg(peer, msg, MSG_BUFFER_SIZE,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &msg_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}

	/* common_data: where to write, and the region's descriptor only */
	struct common_data data = {0};
	data.data_offset = (uint16_t)data_offset;
	size_t mr_desc_size;
	(void) rpma_mr_get_descriptor_size(mr, &mr_desc_size);
	data.mr_desc_size = (uint8_t)mr_desc_size;
	if ((ret = rpma_mr_get_descriptor(mr, &data.descriptors[0]))) {
		FAIL("rpma_mr_get_descriptor", ret);
		goto err_mr_dereg;
	}
	struct rpma_conn_private_data pdata = {&data, sizeof(data)};

	if ((ret = gpspm_conn_cfg_new(&cfg)))
		goto err_mr_dereg;

	if ((ret = rpma_ep_next_conn_req(ep, cfg, &req))) {
		FAIL("rpma_ep_next_conn_req", ret);
		goto err_cfg_delete;
	}
	/* the client sends its request as soon as it has written */
	if ((ret = rpma_conn_req_recv(req, msg_mr, RECV_OFFSET, MSG_SIZE_MAX,
			NULL))) {
		FAIL("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_cfg_delete;
	}
	if ((ret = rpma_conn_req_connect(&req, &pdata, &conn))) {
		FAIL("rpma_conn_req_connect", ret);
		goto err_cfg_delete;
	}
	if ((ret = expect_event(conn, RPMA_CONN_ESTABLISHED))) {
		(void) rpma_conn_delete(&conn);
		goto err_cfg_delete;
	}

	if ((ret = serve_flush(conn, msg_mr, msg, KILOBYTE))) {
		/* hang up: the client must not wait for a response */
		(void) disconnect_and_wait_for_conn_close(&conn);
		goto err_cfg_delete;
	}

	/* the client hangs up */
	ret = wait_for_conn_close_and_disconnect(&conn);
	if (ret == 0)
		printf("New value: %s\n", mem + data_offset);

err_cfg_delete:
	(void) rpma_conn_cfg_delete(&cfg);
err_mr_dereg:
	(void) rpma_mr_dereg(&msg_mr);
	(void) rpma_mr_dereg(&mr);
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(msg);
	free(mem);
	return ret ? -1 : 0;
}
