// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/07-atomic-write/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 07-atomic-write-server.c -- the server of librpma's example 07 on C
 * librpma, DRAM only, for the interop test
 *
 *	server <server_address> <port> [<pmem-path>]
 *
 * It exposes a log (struct log: signature[8], used u64 at 8, data[1024] at
 * 16; used starts at 16) for remote reads, writes and flushes to
 * visibility, sends common_data with data_offset = 8 (where "used" is),
 * waits for the client to append its words and hang up, and prints the log
 * (bytes 16 to used-1) with each NUL as a newline: one word per line.
 * The optional argument is accepted and ignored (no PMem here).
 */
#include <stddef.h>

#include "interop-common.h"

#define LOG_SIGNATURE_SIZE 8
#define LOG_DATA_SIZE KILOBYTE

struct log {
	char signature[LOG_SIGNATURE_SIZE];
	uint64_t used;
	char data[LOG_DATA_SIZE];
};

_Static_assert(sizeof(struct log) == 1040, "struct log is 1040 bytes");

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
	struct rpma_mr_local *mr = NULL;
	struct rpma_conn *conn = NULL;
	int ret;

	fprintf(stderr, "No <pmem-path> provided. Using DRAM instead.\n");
	struct log *log = malloc_aligned(sizeof(struct log));
	if (log == NULL)
		return -2;
	log->used = offsetof(struct log, data);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, log, sizeof(struct log),
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_ep_shutdown;
	}

	struct common_data data = {0};
	data.data_offset = offsetof(struct log, used);
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

	/* the client appends its words and hangs up */
	if ((ret = wait_for_conn_close_and_disconnect(&conn)))
		goto err_mr_dereg;

	/* the log, one word per line */
	size_t end = log->used - offsetof(struct log, data);
	if (log->used < offsetof(struct log, data) || end > LOG_DATA_SIZE) {
		fprintf(stderr, "the log's used value %" PRIu64
				" is out of range\n", log->used);
		ret = -1;
		goto err_mr_dereg;
	}
	for (size_t i = 0; i < end; i++)
		putchar(log->data[i] == '\0' ? '\n' : log->data[i]);

err_mr_dereg:
	(void) rpma_mr_dereg(&mr);
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(log);
	return ret ? -2 : 0;
}
