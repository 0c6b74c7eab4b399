// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/05-flush-to-persistent/server.c
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * 05-flush-to-persistent-server.c -- the server of librpma's example 05 on
 * C librpma, DRAM only, for the interop test
 *
 *	server <server_address> <port> [<pmem-path>] [direct-pmem-write]
 *
 * It exposes 1 KiB of zeroed DRAM (data_offset 0) for remote writes and
 * flushes to visibility, sends common_data with the memory region's
 * descriptor and its peer configuration's descriptor (direct write to PMem:
 * off, as librpma's example without PMem), waits for the client to write,
 * flush and hang up, and prints "New value: <what the client wrote>".
 * The optional arguments are accepted and ignored (no PMem here).
 */
#include "interop-common.h"

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <server_address> <port> "
				"[<pmem-path>] [direct-pmem-write]\n", argv[0]);
		exit(-1);
	}
	interop_log_init();
	char *addr = argv[1];
	char *port = argv[2];

	struct rpma_peer *peer = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_conn *conn = NULL;
	int ret;

	fprintf(stderr, "No <pmem-path> provided. Using DRAM instead.\n");
	char *mem = malloc_aligned(KILOBYTE);
	if (mem == NULL)
		return -1;
	size_t data_offset = 0;
	if (mem[data_offset] != '\0')
		printf("Old value: %s\n", mem + data_offset);

	if ((ret = new_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer)))
		goto err_free;

	/* the peer configuration: direct write to PMem stays off on DRAM */
	if ((ret = rpma_peer_cfg_new(&pcfg))) {
		FAIL("rpma_peer_cfg_new", ret);
		goto err_peer_delete;
	}

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		FAIL("rpma_ep_listen", ret);
		goto err_pcfg_delete;
	}

	/* DRAM can be flushed to visibility only */
	if ((ret = rpma_mr_reg(peer, mem, KILOBYTE,
			RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr))) {
		FAIL("rpma_mr_reg", ret);
		goto err_ep_shutdown;
	}

	struct common_data data = {0};
	data.data_offset = (uint16_t)data_offset;
	size_t mr_desc_size, pcfg_desc_size;
	(void) rpma_mr_get_descriptor_size(mr, &mr_desc_size);
	(void) rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc_size);
	data.mr_desc_size = (uint8_t)mr_desc_size;
	data.pcfg_desc_size = (uint8_t)pcfg_desc_size;
	if ((ret = rpma_mr_get_descriptor(mr, &data.descriptors[0]))) {
		FAIL("rpma_mr_get_descriptor", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_peer_cfg_get_descriptor(pcfg,
			&data.descriptors[mr_desc_size]))) {
		FAIL("rpma_peer_cfg_get_descriptor", ret);
		goto err_mr_dereg;
	}
	struct rpma_conn_private_data pdata = {&data, sizeof(data)};

	if ((ret = server_accept_connection(ep, NULL, &pdata, &conn)))
		goto err_mr_dereg;

	/* the client writes, flushes and hangs up */
	ret = wait_for_conn_close_and_disconnect(&conn);
	if (ret == 0)
		printf("New value: %s\n", mem + data_offset);

err_mr_dereg:
	(void) rpma_mr_dereg(&mr);
err_ep_shutdown:
	(void) rpma_ep_shutdown(&ep);
err_pcfg_delete:
	(void) rpma_peer_cfg_delete(&pcfg);
err_peer_delete:
	(void) rpma_peer_delete(&peer);
err_free:
	free(mem);
	return ret;
}
