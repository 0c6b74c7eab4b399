// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/02-read-to-volatile/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 02-read-to-volatile-server.c -- the server of librpma's example 02 on
 * C librpma, DRAM only, for the interop test
 *
 *	server <server_address> <port>
 *
 * It exposes "Hello client!" and its NUL (14 bytes of DRAM) for remote
 * reads, sends common_data with the memory region's descriptor (data_offset
 * 0, no peer configuration), waits for the client to read it and hang up,
 * and prints nothing.
 */
#include "interop-common.h"

#define HELLO_CLIENT "Hello client!"

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port>\n",
				argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_conn *conn = NULL;
	int ret;

	/* the message and its NUL */
	size_t size = sizeof(HELLO_CLIENT);
	char *mem = malloc_aligned(size);
	if (mem == NULL)
		return -1;
	memcpy(mem, HELLO_CLIENT, size);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_peer_delete;
	}

	if ((ret = rpma_mr_reg(peer, mem, size, RPMA_MR_USAGE_READ_SRC,
			&mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_ep_shutdown;
	}

	/* common_data: the region's descriptor only */
	struct common_data data = {0};
	size_t mr_desc_size;
	(void) rpma_mr_get_descriptor_size(mr, &mr_desc_size);
	data.mr_desc_size = (uint8_t)mr_desc_size;
	if ((ret = rpma_mr_get_descriptor(mr, &data.descriptors[0]))) {
		FAIL("rpma_mr_get_descriptor", ret);
		goto err_mr_dereg;
	}
	struct rpma_conn_private_data pdata = {&data, sizeof(data)};

	if ((ret = server_accept_connection(ep, NULL, &pdata, &conn)))
		goto err_mr_dereg;

	/* the client reads and hangs up */
	ret = wait_for_conn_close_and_disconnect(&conn);

err_mr_dereg:
	(void) rpma_mr_dereg(&mr);
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(mem);
	return ret;
}
