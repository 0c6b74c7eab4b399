// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/12-receive-completion-queue/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 12-receive-completion-queue-client.c -- the client of librpma's example
 * 12 on C librpma, for the interop test
 *
 *	client <server_address> <port> <start_value> <rounds> [<sleep>]
 *
 * As 08's client, but the connection has a separate receive CQ
 * (rpma_conn_cfg_set_rcq_size(RCQ_SIZE)): while (--rounds) it posts a
 * receive, sends the counter ("CLIENT: Value sent: N"), waits for the
 * send's completion on the main CQ and then for the server's answer on the
 * RCQ (rpma_conn_get_rcq), the new counter ("CLIENT: Value received:
 * N+1"), and sleeps <sleep> microseconds. Then it sends UINT64_MAX with a
 * completion on error only, as librpma's client does.
 *
 * One deviation from librpma's client, in timing only, the same as our Go
 * client's: after UINT64_MAX it waits for the server to hang up (which the
 * server does once it has received it) and then disconnects. librpma's
 * client disconnects at once, and on rxe that can flush the send before it
 * leaves, so the server never sees the end (librpma's own server then
 * waits for ever). Build with -DLIBRPMA_EXACT_END for librpma's behaviour.
 * After a failed exchange it hangs up itself, without UINT64_MAX.
 */
#include "interop-ping-pong.h"

int
main(int argc, char *argv[])
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s <server_address> <port> "
				"<start_value> <rounds> [<sleep>]\n", argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];
	uint64_t counter, rounds, sleep_usec = 0;
	if (strtoul_noerror(argv[3], &counter) ||
			strtoul_noerror(argv[4], &rounds) ||
			(argc >= 6 && strtoul_noerror(argv[5], &sleep_usec)))
		return -1;

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int ret;

	uint64_t *recv = malloc_aligned(MSG_SIZE);
	uint64_t *send = malloc_aligned(MSG_SIZE);
	if (recv == NULL || send == NULL) {
		free(recv);
		free(send);
		return -1;
	}

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer)))
		goto err_free;
	if ((ret = rpma_mr_reg(peer, recv, MSG_SIZE, RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, send, MSG_SIZE, RPMA_MR_USAGE_SEND,
			&send_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}

	/* the connection's configuration: a receive CQ of its own */
	if ((ret = rpma_conn_cfg_new(&cfg))) {
		FAIL("rpma_conn_cfg_new", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_conn_cfg_set_rcq_size(cfg, RCQ_SIZE))) {
		FAIL("rpma_conn_cfg_set_rcq_size", ret);
		goto err_cfg_delete;
	}

	if ((ret = client_connect(peer, addr, port, cfg, NULL, &conn)))
		goto err_cfg_delete;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_disconnect;
	}
	if ((ret = rpma_conn_get_rcq(conn, &rcq))) {
		FAIL("rpma_conn_get_rcq", ret);
		goto err_conn_disconnect;
	}
	if (rcq == NULL) {
		fprintf(stderr, "the connection has no receive CQ\n");
		ret = -1;
		goto err_conn_disconnect;
	}

	while (--rounds) {
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv))) {
			FAIL("rpma_recv", ret);
			goto err_conn_disconnect;
		}
		printf("CLIENT: Value sent: %" PRIu64 "\n", counter);
		*send = counter;
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
				RPMA_F_COMPLETION_ALWAYS, NULL))) {
			FAIL("rpma_send", ret);
			goto err_conn_disconnect;
		}
		/* the send's completion on the main CQ, then the answer's */
		if ((ret = get_wc_and_validate(cq, IBV_WC_SEND, "rpma_send()")))
			goto err_conn_disconnect;
		if ((ret = get_wc_and_validate(rcq, IBV_WC_RECV, "rpma_recv()")))
			goto err_conn_disconnect;
		counter = *recv;
		printf("CLIENT: Value received: %" PRIu64 "\n", counter);
		if (sleep_usec > 0)
			(void) usleep((useconds_t)sleep_usec);
	}

	*send = I_M_DONE;
	if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
			RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		FAIL("rpma_send", ret);
		goto err_conn_disconnect;
	}
#ifndef LIBRPMA_EXACT_END
	/* the server hangs up once it has the end */
	ret = wait_for_conn_close_and_disconnect(&conn);
	goto err_cfg_delete;
#endif

err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
err_cfg_delete:
	(void) rpma_conn_cfg_delete(&cfg);
err_mr_dereg:
	(void) rpma_mr_dereg(&send_mr);
	(void) rpma_mr_dereg(&recv_mr);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(send);
	free(recv);
	return ret ? -1 : 0;
}
