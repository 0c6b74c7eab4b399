// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2026, The gorpma authors */
/* See LICENSE at the root of github.com/gorpma/rpma. */

/*
 * grant-client.c -- the client of example grant on C librpma, for the
 * interop test: a grant of the Go library (a memory window bound on one
 * connection) used by a C librpma client as a region
 *
 *	client <server_address> <port> <tenants>
 *
 * For each tenant in turn it posts a receive (rpma_conn_req_recv),
 * connects, receives the grant's message (the 21-byte descriptor, then the
 * 1-byte peer configuration descriptor), writes "Hello from tenant <i>"
 * into the grant and flushes it (VISIBILITY; op context 0xF01D). Then the
 * last tenant writes "intruder" with the first tenant's grant, which must
 * fail with IBV_WC_REM_ACCESS_ERR. It prints what the Go client prints.
 */
#include "interop-common.h"

#define SLOT_SIZE KILOBYTE
/* librpma's region descriptor (rpma_mr_get_descriptor_size) */
#define GRANT_DESC_SIZE 21
#define GRANT_MSG_SIZE (GRANT_DESC_SIZE + 1)
#define MAX_TENANTS 8

struct tenant {
	struct rpma_conn *conn;
	struct rpma_mr_remote *grant;
};

/* connect as tenant i and decode its grant */
static int
connect_tenant(struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_mr_local *msgs, char *msg_buf, int i,
		struct tenant *t)
{
	struct rpma_conn_req *req = NULL;
	struct ibv_wc wc;
	int ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		FAIL("rpma_conn_req_new", ret);
		return ret;
	}
	if ((ret = rpma_conn_req_recv(req, msgs, (size_t)i * GRANT_MSG_SIZE,
			GRANT_MSG_SIZE, NULL))) {
		FAIL("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		return ret;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &t->conn))) {
		FAIL("rpma_conn_req_connect", ret);
		return ret;
	}
	if ((ret = expect_event(t->conn, RPMA_CONN_ESTABLISHED)))
		return ret;
	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(t->conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		return ret;
	}
	if ((ret = wait_for_one_wc(cq, &wc)))
		return ret;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
		fprintf(stderr, "rpma_recv() failed: %s\n",
				ibv_wc_status_str(wc.status));
		return -1;
	}
	char *msg = &msg_buf[i * GRANT_MSG_SIZE];
	if ((ret = rpma_mr_remote_from_descriptor(msg, GRANT_DESC_SIZE,
			&t->grant))) {
		FAIL("rpma_mr_remote_from_descriptor", ret);
		return ret;
	}
	struct rpma_peer_cfg *pcfg = NULL;
	if ((ret = rpma_peer_cfg_from_descriptor(&msg[GRANT_DESC_SIZE], 1,
			&pcfg))) {
		FAIL("rpma_peer_cfg_from_descriptor", ret);
		return ret;
	}
	ret = rpma_conn_apply_remote_peer_cfg(t->conn, pcfg);
	(void) rpma_peer_cfg_delete(&pcfg);
	if (ret)
		FAIL("rpma_conn_apply_remote_peer_cfg", ret);
	return ret;
}

/*
 * write len bytes at off of src to the start of grant through conn and
 * flush them; the status of the first completion lands in *status
 */
static int
write_and_flush(struct rpma_conn *conn, struct rpma_mr_remote *grant,
		struct rpma_mr_local *src, size_t off, size_t len,
		enum ibv_wc_status *status)
{
	struct ibv_wc wc;
	int ret = rpma_write(conn, grant, 0, src, off, len,
			RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret) {
		FAIL("rpma_write", ret);
		return ret;
	}
	if ((ret = rpma_flush(conn, grant, 0, len, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, FLUSH_ID))) {
		FAIL("rpma_flush", ret);
		return ret;
	}
	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		return ret;
	}
	if ((ret = wait_for_one_wc(cq, &wc)))
		return ret;
	*status = wc.status;
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <server_address> <port> <tenants>\n",
				argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];
	int tenants = atoi(argv[3]);
	if (tenants < 1 || tenants > MAX_TENANTS) {
		fprintf(stderr, "<tenants> must be in [1, %d]\n", MAX_TENANTS);
		exit(-1);
	}

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL, *msg_mr = NULL;
	struct tenant ts[MAX_TENANTS];
	memset(ts, 0, sizeof(ts));
	enum ibv_wc_status status;
	int ret = -1;

	char *src = malloc_aligned((size_t)tenants * SLOT_SIZE);
	char *msgs = malloc_aligned((size_t)tenants * GRANT_MSG_SIZE);
	if (src == NULL || msgs == NULL)
		goto err_free;
	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;
	if ((ret = rpma_mr_reg(peer, src, (size_t)tenants * SLOT_SIZE,
			RPMA_MR_USAGE_WRITE_SRC, &src_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, msgs, (size_t)tenants * GRANT_MSG_SIZE,
			RPMA_MR_USAGE_RECV, &msg_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}

	for (int i = 0; i < tenants; i++) {
		if ((ret = connect_tenant(peer, addr, port, msg_mr, msgs, i,
				&ts[i])))
			goto err_conns;
		char *greeting = &src[i * SLOT_SIZE];
		snprintf(greeting, SLOT_SIZE, "Hello from tenant %d", i);
		if ((ret = write_and_flush(ts[i].conn, ts[i].grant, src_mr,
				(size_t)i * SLOT_SIZE, strlen(greeting) + 1,
				&status)))
			goto err_conns;
		if (status != IBV_WC_SUCCESS) {
			fprintf(stderr, "tenant %d: %s\n", i,
					ibv_wc_status_str(status));
			ret = -1;
			goto err_conns;
		}
		printf("tenant %d wrote its slot\n", i);
	}
	if (tenants > 1) {
		int last = tenants - 1;
		char *intruder = &src[last * SLOT_SIZE];
		snprintf(intruder, SLOT_SIZE, "intruder");
		if ((ret = write_and_flush(ts[last].conn, ts[0].grant, src_mr,
				(size_t)last * SLOT_SIZE, strlen(intruder) + 1,
				&status)))
			goto err_conns;
		if (status != IBV_WC_REM_ACCESS_ERR) {
			fprintf(stderr, "tenant %d wrote with tenant 0's grant: "
					"%s (want a remote access error)\n",
					last, ibv_wc_status_str(status));
			ret = -1;
			goto err_conns;
		}
		printf("tenant %d with tenant 0's grant: %s\n", last,
				ibv_wc_status_str(status));
	}

err_conns:
	for (int i = 0; i < tenants; i++) {
		(void) rpma_mr_remote_delete(&ts[i].grant);
		if (ts[i].conn != NULL) {
			int ret2 = disconnect_and_wait_for_conn_close(
					&ts[i].conn);
			if (ret == 0)
				ret = ret2;
		}
	}
	(void) rpma_mr_dereg(&msg_mr);
err_mr_dereg:
	(void) rpma_mr_dereg(&src_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(src);
	free(msgs);
	return ret;
}
