// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2022, Intel Corporation */
/* Copyright 2022, Fujitsu */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/13-messages-ping-pong-with-srq/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 13-messages-ping-pong-with-srq-server.c -- the server of librpma's
 * example 13 on C librpma, for the interop test
 *
 *	server <server_address> <port> [<timeout>]
 *
 * All its connections receive through one shared receive queue
 * (rpma_srq_new with the default configuration, rpma_conn_cfg_set_srq),
 * whose own receive CQ (rpma_srq_get_rcq) gets every receive completion.
 * It accepts clients (up to CLIENT_MAX) until none has come for <timeout>
 * seconds (default 5), posting on the SRQ one 8-byte receive per client,
 * in the client's slot of the receive region (rpma_srq_recv, op context =
 * the slot's address), and printing "The client #N has been connected.";
 * then "Server ended listening.". Then it answers every counter N that
 * arrives, in whatever slot, on the connection of the completion's QP
 * number ("[server] value received: N from the connection [qp#Q]"): it
 * posts the slot's receive again and sends N+1 from the same slot of the
 * send region, with a completion on error only ("[server] value sent:
 * N+1 from the connection [qp#Q]"), until every client has sent
 * UINT64_MAX. Then it hangs up on all of them without waiting.
 */
#include <errno.h>
#include <poll.h>

#include "interop-ping-pong.h"

#define CLIENT_MAX 10
#define TIMEOUT_5S 5000 /* ms */

struct client {
	struct rpma_conn *conn;
	uint32_t qp_num;
};

static struct client clients[CLIENT_MAX];
static int num_clients;

/* the client whose connection has the QP number qp_num */
static struct client *
find_qp(uint32_t qp_num)
{
	for (int i = 0; i < num_clients; i++)
		if (clients[i].qp_num == qp_num)
			return &clients[i];
	fprintf(stderr, "Unable to find the connection [qp#%" PRIu32 "]\n",
			qp_num);
	return NULL;
}

/*
 * Wait for at most timeout ms for a connection request on ep; 1 if one
 * came, 0 if none did, -1 on error.
 */
static int
wait_for_conn_req(int ep_fd, int timeout)
{
	struct pollfd pfd = {.fd = ep_fd, .events = POLLIN};
	int n;
	while ((n = poll(&pfd, 1, timeout)) < 0 && errno == EINTR)
		;
	if (n < 0) {
		perror("poll");
		return -1;
	}
	return n > 0 && (pfd.revents & POLLIN);
}

/*
 * Accept the next connection request as the client of the next slot, with
 * a receive posted on the SRQ in that slot for its first message.
 */
static int
accept_client(struct rpma_ep *ep, struct rpma_conn_cfg *cfg,
		struct rpma_srq *srq, struct rpma_mr_local *recv_mr,
		uint64_t *recv)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret) {
		FAIL("rpma_ep_next_conn_req", ret);
		return ret;
	}
	if (num_clients == CLIENT_MAX) {
		fprintf(stderr, "No free slot for a new connection request.\n");
		(void) rpma_conn_req_delete(&req); /* rejects it */
		return -1;
	}
	struct client *cl = &clients[num_clients];
	size_t slot = (size_t)num_clients;
	if ((ret = rpma_srq_recv(srq, recv_mr, slot * MSG_SIZE, MSG_SIZE,
			recv + slot))) {
		FAIL("rpma_srq_recv", ret);
		(void) rpma_conn_req_delete(&req);
		return ret;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &cl->conn))) {
		FAIL("rpma_conn_req_connect", ret);
		return ret;
	}
	if ((ret = expect_event(cl->conn, RPMA_CONN_ESTABLISHED))) {
		(void) rpma_conn_delete(&cl->conn);
		return ret;
	}
	num_clients++;
	if ((ret = rpma_conn_get_qp_num(cl->conn, &cl->qp_num))) {
		FAIL("rpma_conn_get_qp_num", ret);
		return ret;
	}
	return 0;
}

/* answer every client's counters until each has sent UINT64_MAX */
static int
ping_pong(struct rpma_srq *srq, struct rpma_mr_local *recv_mr,
		struct rpma_mr_local *send_mr, uint64_t *recv, uint64_t *send)
{
	struct rpma_cq *rcq = NULL;
	struct ibv_wc wc[CLIENT_MAX];
	int done = 0;
	int ret = rpma_srq_get_rcq(srq, &rcq);
	if (ret) {
		FAIL("rpma_srq_get_rcq", ret);
		return ret;
	}
	if (rcq == NULL) {
		fprintf(stderr, "the shared RQ has no receive CQ\n");
		return -1;
	}

	while (done < num_clients) {
		int num_got = 0;
		if ((ret = rpma_cq_wait(rcq))) {
			FAIL("rpma_cq_wait", ret);
			break;
		}
		ret = rpma_cq_get_wc(rcq, num_clients, wc, &num_got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret) {
			FAIL("rpma_cq_get_wc", ret);
			break;
		}
		for (int i = 0; i < num_got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_srq_recv() failed: %s\n",
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
			if (wc[i].opcode != IBV_WC_RECV) {
				fprintf(stderr, "received unexpected wc.opcode "
					"value (%d != %d)\n",
					wc[i].opcode, IBV_WC_RECV);
				return -1;
			}
			struct client *cl = find_qp(wc[i].qp_num);
			if (cl == NULL)
				return -1;
			/* the slot the message landed in: any posted one */
			uintptr_t at = (uintptr_t)wc[i].wr_id;
			size_t slot = (at - (uintptr_t)recv) / MSG_SIZE;
			if (at < (uintptr_t)recv || slot >= CLIENT_MAX ||
					at != (uintptr_t)(recv + slot) ||
					wc[i].byte_len != MSG_SIZE) {
				fprintf(stderr, "received completion is not "
					"as expected (op context 0x%"
					PRIXPTR ", %" PRIu32 " bytes)\n",
					at, wc[i].byte_len);
				return -1;
			}
			uint64_t value = recv[slot];
			if (value == I_M_DONE) {
				done++;
				continue;
			}
			printf("[server] value received: %" PRIu64
				" from the connection [qp#%" PRIu32 "]\n",
				value, cl->qp_num);
			/* the next message, in the same slot */
			if ((ret = rpma_srq_recv(srq, recv_mr,
					slot * MSG_SIZE, MSG_SIZE,
					recv + slot))) {
				FAIL("rpma_srq_recv", ret);
				return ret;
			}
			send[slot] = value + 1;
			printf("[server] value sent: %" PRIu64
				" from the connection [qp#%" PRIu32 "]\n",
				send[slot], cl->qp_num);
			if ((ret = rpma_send(cl->conn, send_mr,
					slot * MSG_SIZE, MSG_SIZE,
					RPMA_F_COMPLETION_ON_ERROR, NULL))) {
				FAIL("rpma_send", ret);
				return ret;
			}
		}
	}
	if (done != num_clients) {
		fprintf(stderr, "Unable to receive data from all connections\n");
		return ret ? ret : -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port> "
				"[<timeout>]\n", argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];
	int timeout = argc >= 4 ? atoi(argv[3]) * 1000 : TIMEOUT_5S;
	if (timeout <= 0) {
		fprintf(stderr, "<timeout> should be a positive number of "
				"seconds (%s given)\n", argv[3]);
		return -1;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	int ep_fd = -1;
	int ret;

	/* one 8-byte slot per client in each region */
	size_t size = CLIENT_MAX * MSG_SIZE;
	uint64_t *recv = malloc_aligned(size);
	uint64_t *send = malloc_aligned(size);
	if (recv == NULL || send == NULL) {
		free(recv);
		free(send);
		return -1;
	}

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;
	/* the shared RQ, with its own receive CQ (the default) */
	if ((ret = rpma_srq_new(peer, NULL, &srq))) {
		FAIL("rpma_srq_new", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_conn_cfg_new(&cfg))) {
		FAIL("rpma_conn_cfg_new", ret);
		goto err_srq_delete;
	}
	if ((ret = rpma_conn_cfg_set_srq(cfg, srq))) {
		FAIL("rpma_conn_cfg_set_srq", ret);
		goto err_cfg_delete;
	}
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_cfg_delete;
	}
	if ((ret = rpma_mr_reg(peer, recv, size, RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_ep_shutdown;
	}
	if ((ret = rpma_mr_reg(peer, send, size, RPMA_MR_USAGE_SEND,
			&send_mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_ep_get_fd(ep, &ep_fd))) {
		FAIL("rpma_ep_get_fd", ret);
		goto err_mr_dereg;
	}

	/* accept clients until none comes within the window */
	while ((ret = wait_for_conn_req(ep_fd, timeout)) == 1) {
		if ((ret = accept_client(ep, cfg, srq, recv_mr, recv)))
			goto err_conn_disconnect;
		printf("The client #%i has been connected.\n", num_clients);
	}
	if (ret)
		goto err_conn_disconnect;
	printf("Server ended listening.\n");

	ret = ping_pong(srq, recv_mr, send_mr, recv, send);

err_conn_disconnect:
	/* hang up on every client, without waiting */
	for (int i = 0; i < num_clients; i++) {
		int ret2 = rpma_conn_disconnect(clients[i].conn);
		if (ret2)
			FAIL("rpma_conn_disconnect", ret2);
		int ret3 = rpma_conn_delete(&clients[i].conn);
		if (ret3)
			FAIL("rpma_conn_delete", ret3);
		if (ret == 0)
			ret = ret2 ? ret2 : ret3;
	}
err_mr_dereg:
	(void) rpma_mr_dereg(&send_mr);
	(void) rpma_mr_dereg(&recv_mr);
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_cfg_delete:
	(void) rpma_conn_cfg_delete(&cfg);
err_srq_delete:
	(void) rpma_srq_delete(&srq);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(send);
	free(recv);
	return ret ? -1 : 0;
}
