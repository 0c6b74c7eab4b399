// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2026, The gorpma authors */
/* See LICENSE at the root of github.com/gorpma/rpma. */

/*
 * interop-errors-client.c -- what C librpma reports when things go wrong,
 * for the error parity test (examples/interop_errors_linux_test.go)
 *
 *	interop-errors-client <addr> <port> refused|write|forged-write|flush
 *
 * refused: connects to a port nobody listens on and prints the event
 * that ends the attempt. The others connect to a server of example 02
 * (whose region is only a read source) and print what a write into its
 * region and a flush of it come to; forged-write first sets
 * RPMA_MR_USAGE_WRITE_DST in the region's descriptor, so that only the
 * device can refuse the write. One line per outcome, in the form the Go
 * side of the test prints too:
 *	event: <rpma_utils_conn_event_2str>
 *	write: <ibv_wc_status_str of the write's completion>
 *	flush: <rpma_err_2str of rpma_flush's return>
 * It exits 0 when it saw an outcome to print, else -1.
 */
#include "interop-common.h"

/* the server's region from its common_data, its usage claiming write */
static int
forged_writable_mr(struct rpma_conn *conn, struct rpma_mr_remote **mr)
{
	struct rpma_conn_private_data pdata;
	int ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		FAIL("rpma_conn_get_private_data", ret);
		return ret;
	}
	if (pdata.ptr == NULL || pdata.len < sizeof(struct common_data)) {
		fprintf(stderr, "private data too small\n");
		return -1;
	}
	struct common_data data;
	memcpy(&data, pdata.ptr, sizeof(data));
	if (data.mr_desc_size != 21) {
		fprintf(stderr, "mr_desc_size %u != 21\n", data.mr_desc_size);
		return -1;
	}
	/* the descriptor: addr (8), size (8), rkey (4), usage (1) */
	data.descriptors[20] |= RPMA_MR_USAGE_WRITE_DST;
	ret = rpma_mr_remote_from_descriptor(&data.descriptors[0],
			data.mr_desc_size, mr);
	if (ret)
		FAIL("rpma_mr_remote_from_descriptor", ret);
	return ret;
}

static int
connect_refused(struct rpma_peer *peer, const char *addr, const char *port)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		printf("connect: %s\n", rpma_err_2str(ret));
		return 0;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &conn))) {
		printf("connect: %s\n", rpma_err_2str(ret));
		return 0;
	}
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	if ((ret = rpma_conn_next_event(conn, &ev))) {
		FAIL("rpma_conn_next_event", ret);
	} else {
		printf("event: %s\n", rpma_utils_conn_event_2str(ev));
	}
	(void) rpma_conn_delete(&conn);
	return ret;
}

int
main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <addr> <port> refused|write|flush\n",
				argv[0]);
		return -1;
	}
	interop_log_init();
	const char *addr = argv[1], *port = argv[2], *what = argv[3];

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	int ret;

	char *src = malloc_aligned(KILOBYTE);
	if (src == NULL)
		return -1;
	memset(src, 0x5A, KILOBYTE);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;

	if (strcmp(what, "refused") == 0) {
		ret = connect_refused(peer, addr, port);
		goto err_peer_delete;
	}

	if ((ret = rpma_mr_reg(peer, src, KILOBYTE, RPMA_MR_USAGE_WRITE_SRC,
			&src_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}
	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_mr_dereg;
	size_t offset = 0;
	if (strcmp(what, "forged-write") == 0)
		ret = forged_writable_mr(conn, &dst_mr);
	else
		ret = remote_mr_from_common_data(conn, &dst_mr, &offset);
	if (ret)
		goto err_conn_disconnect;

	if (strcmp(what, "write") == 0 || strcmp(what, "forged-write") == 0) {
		struct rpma_cq *cq = NULL;
		struct ibv_wc wc;
		if ((ret = rpma_write(conn, dst_mr, 0, src_mr, 0, 8,
				RPMA_F_COMPLETION_ALWAYS, NULL))) {
			FAIL("rpma_write", ret);
			goto err_mr_remote_delete;
		}
		if ((ret = rpma_conn_get_cq(conn, &cq))) {
			FAIL("rpma_conn_get_cq", ret);
			goto err_mr_remote_delete;
		}
		if ((ret = wait_for_one_wc(cq, &wc)))
			goto err_mr_remote_delete;
		printf("write: %s\n", ibv_wc_status_str(wc.status));
	} else if (strcmp(what, "flush") == 0) {
		/* returns at once when the region does not allow it */
		int fret = rpma_flush(conn, dst_mr, 0, 8,
				RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL);
		printf("flush: %s\n", rpma_err_2str(fret));
	} else {
		fprintf(stderr, "unknown case: %s\n", what);
		ret = -1;
	}

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
