// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2021-2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/08-messages-ping-pong/client.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 08-messages-ping-pong-client.c -- the client of librpma's example 08 on
 * C librpma, for the interop test
 *
 *	client <server_address> <port> <seed> <rounds> [<sleep>]
 *
 * while (--rounds): posts a receive, sends the counter ("Value sent: N"),
 * waits for both completions and takes the server's answer as the new
 * counter ("Value received: N+1"), then sleeps <sleep> microseconds. Then
 * it sends UINT64_MAX and hangs up. Numbers are read as librpma's
 * strtoul_noerror does.
 *
 * One deviation from librpma's client, in timing only: it waits for the
 * completion of the UINT64_MAX send before hanging up. librpma's client
 * posts it with RPMA_F_COMPLETION_ON_ERROR and disconnects at once, and on
 * rxe the disconnect flushes that send before it leaves in most runs, so
 * the server never sees the end (librpma's own server then waits for
 * ever). Build with -DLIBRPMA_EXACT_END for librpma's behaviour.
 */
#include "interop-ping-pong.h"

int
main(int argc, char *argv[])
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s <server_address> <port> <seed> "
				"<rounds> [<sleep>]\n", argv[0]);
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
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
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
	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_mr_dereg;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL("rpma_conn_get_cq", ret);
		goto err_conn_disconnect;
	}

	while (--rounds) {
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv))) {
			FAIL("rpma_recv", ret);
			goto err_conn_disconnect;
		}
		*send = counter;
		printf("Value sent: %" PRIu64 "\n", counter);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
				RPMA_F_COMPLETION_ALWAYS, NULL))) {
			FAIL("rpma_send", ret);
			goto err_conn_disconnect;
		}
		int send_cmpl = 0, recv_cmpl = 0;
		if ((ret = wait_and_process_completions(cq, recv, &send_cmpl,
				&recv_cmpl)))
			goto err_conn_disconnect;
		counter = *recv;
		printf("Value received: %" PRIu64 "\n", counter);
		if (sleep_usec > 0)
			(void) usleep((useconds_t)sleep_usec);
	}

	*send = I_M_DONE;
#ifdef LIBRPMA_EXACT_END
	/*
	 * librpma's client: the end, without waiting for its completion.
	 * Racy: rdma_disconnect() moves the QP to the error state, which can
	 * flush the send before it leaves (most runs on rxe); the server then
	 * never gets UINT64_MAX (librpma's own server waits for ever).
	 */
	if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
			RPMA_F_COMPLETION_ON_ERROR, NULL)))
		FAIL("rpma_send", ret);
#else
	/*
	 * The same message, but sent before hanging up: wait for its
	 * completion, as our Go client does. The bytes on the wire are the
	 * same; see LIBRPMA_EXACT_END for librpma's race.
	 */
	if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE,
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		FAIL("rpma_send", ret);
	} else {
		int send_cmpl = 0, recv_cmpl = 1; /* no receive is posted */
		ret = wait_and_process_completions(cq, recv, &send_cmpl,
				&recv_cmpl);
	}
#endif

err_conn_disconnect:
	{
		int ret2 = disconnect_and_wait_for_conn_close(&conn);
		if (ret == 0)
			ret = ret2;
	}
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
