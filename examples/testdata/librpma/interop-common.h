/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright 2020-2022, Intel Corporation */
/* Copyright 2026, The gorpma authors */
/*
 * Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
 *   examples/common/common-conn.h
 *   examples/common/common-conn.c
 *   examples/common/common-hello.h
 *   examples/common/common-hello.c
 *   examples/common/common-messages-ping-pong.h
 * See LICENSE and NOTICE at the root of github.com/gorpma/rpma.
 */

/*
 * interop-common.h -- what the C programs of the interop test share
 *
 * The C side of examples/interop_linux_test.go: small programs on C
 * librpma (1.2.0, and 1.3.0 in the Debian 13 guest) that follow the wire
 * protocols of librpma's examples (examples/internal/common/EXAMPLES.md),
 * so that the test can pair them with the Go ports in both directions.
 * These are written for the test, after the spec, not copied from
 * librpma; they use DRAM only.
 *
 * Everything here is header-only so that each program compiles alone:
 *	cc -o NAME NAME.c -lrpma -libverbs
 */
#ifndef INTEROP_COMMON_H
#define INTEROP_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <librpma.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KILOBYTE 1024

/* librpma's examples' FLUSH_ID: the op context of the last flush */
#define FLUSH_ID ((void *)0xF01D)

/*
 * struct common_data: the server's accept private data, 28 bytes, host
 * (little-endian) order: data_offset, the sizes of the two descriptors, then
 * the memory region's descriptor and the peer configuration's descriptor.
 */
#define DESCRIPTORS_MAX_SIZE 24

struct common_data {
	uint16_t data_offset;
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	char descriptors[DESCRIPTORS_MAX_SIZE];
};

_Static_assert(sizeof(struct common_data) == 28, "common_data is 28 bytes");

/* report a failed librpma call on stderr */
#define FAIL(what, ret) \
	fprintf(stderr, "%s failed: %s\n", (what), rpma_err_2str(ret))

/*
 * librpma's examples log the library's INFO messages and above; stdout is
 * line-buffered so that a killed program's output still reaches the test
 */
static inline void
interop_log_init(void)
{
	(void) setvbuf(stdout, NULL, _IOLBF, 0);
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_INFO);
}

/* page-aligned, zeroed memory, as the examples' malloc_aligned */
static inline void *
malloc_aligned(size_t size)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	void *mem = NULL;

	if (pagesize < 0 || posix_memalign(&mem, (size_t)pagesize, size)) {
		fprintf(stderr, "posix_memalign(%zu) failed\n", size);
		return NULL;
	}
	memset(mem, 0, size);
	return mem;
}

/* a peer on the device of addr (local for a server, remote for a client) */
static inline int
new_peer(const char *addr, enum rpma_util_ibv_context_type type,
		struct rpma_peer **peer)
{
	struct ibv_context *dev = NULL;
	int ret = rpma_utils_get_ibv_context(addr, type, &dev);
	if (ret) {
		FAIL("rpma_utils_get_ibv_context", ret);
		return ret;
	}
	ret = rpma_peer_new(dev, peer);
	if (ret)
		FAIL("rpma_peer_new", ret);
	return ret;
}

/* wait for the next connection event, which must be want */
static inline int
expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);
	if (ret) {
		FAIL("rpma_conn_next_event", ret);
		return ret;
	}
	if (ev != want) {
		fprintf(stderr,
			"rpma_conn_next_event returned an unexpected event: %s\n",
			rpma_utils_conn_event_2str(ev));
		return -1;
	}
	return 0;
}

/* client_connect: request, connect with pdata, wait for ESTABLISHED */
static inline int
client_connect(struct rpma_peer *peer, const char *addr, const char *port,
		const struct rpma_conn_cfg *cfg,
		struct rpma_conn_private_data *pdata, struct rpma_conn **conn)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (ret) {
		FAIL("rpma_conn_req_new", ret);
		return ret;
	}
	ret = rpma_conn_req_connect(&req, pdata, conn);
	if (ret) {
		FAIL("rpma_conn_req_connect", ret);
		return ret;
	}
	ret = expect_event(*conn, RPMA_CONN_ESTABLISHED);
	if (ret)
		(void) rpma_conn_delete(conn);
	return ret;
}

/*
 * server_accept_connection: next request, accept with pdata, wait for
 * ESTABLISHED
 */
static inline int
server_accept_connection(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_private_data *pdata, struct rpma_conn **conn)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret) {
		FAIL("rpma_ep_next_conn_req", ret);
		return ret;
	}
	ret = rpma_conn_req_connect(&req, pdata, conn);
	if (ret) {
		FAIL("rpma_conn_req_connect", ret);
		return ret;
	}
	ret = expect_event(*conn, RPMA_CONN_ESTABLISHED);
	if (ret)
		(void) rpma_conn_delete(conn);
	return ret;
}

/* the side that waits for the peer to hang up */
static inline int
wait_for_conn_close_and_disconnect(struct rpma_conn **conn)
{
	int ret = expect_event(*conn, RPMA_CONN_CLOSED);
	int ret2 = rpma_conn_disconnect(*conn);
	if (ret2)
		FAIL("rpma_conn_disconnect", ret2);
	int ret3 = rpma_conn_delete(conn);
	if (ret3)
		FAIL("rpma_conn_delete", ret3);
	return ret ? ret : ret2 ? ret2 : ret3;
}

/* the side that hangs up */
static inline int
disconnect_and_wait_for_conn_close(struct rpma_conn **conn)
{
	int ret = rpma_conn_disconnect(*conn);
	if (ret)
		FAIL("rpma_conn_disconnect", ret);
	else
		ret = expect_event(*conn, RPMA_CONN_CLOSED);
	int ret2 = rpma_conn_delete(conn);
	if (ret2)
		FAIL("rpma_conn_delete", ret2);
	return ret ? ret : ret2;
}

/* wait for one completion on cq */
static inline int
wait_for_one_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret = rpma_cq_wait(cq);
	if (ret) {
		FAIL("rpma_cq_wait", ret);
		return ret;
	}
	ret = rpma_cq_get_wc(cq, 1, wc, NULL);
	if (ret)
		FAIL("rpma_cq_get_wc", ret);
	return ret;
}

/*
 * The server's memory region from its common_data in the connection's
 * private data (examples 02 and 11): data_offset and the MR descriptor only,
 * as every reader but 05's client; the private data must hold a whole
 * common_data.
 */
static inline int
remote_mr_from_common_data(struct rpma_conn *conn, struct rpma_mr_remote **mr,
		size_t *data_offset)
{
	struct rpma_conn_private_data pdata;
	int ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		FAIL("rpma_conn_get_private_data", ret);
		return ret;
	}
	if (pdata.ptr == NULL || pdata.len < sizeof(struct common_data)) {
		fprintf(stderr, "Received connection's private data is too "
				"small (%u < %zu)\n", pdata.len,
				sizeof(struct common_data));
		return -1;
	}
	struct common_data *data = pdata.ptr;
	if (data->mr_desc_size > DESCRIPTORS_MAX_SIZE) {
		fprintf(stderr, "mr_desc_size too big (%u > %d)\n",
				data->mr_desc_size, DESCRIPTORS_MAX_SIZE);
		return -1;
	}
	ret = rpma_mr_remote_from_descriptor(&data->descriptors[0],
			data->mr_desc_size, mr);
	if (ret) {
		FAIL("rpma_mr_remote_from_descriptor", ret);
		return ret;
	}
	*data_offset = data->data_offset;
	return 0;
}

/*
 * The <imm> argument of examples 10 and 11: strtoul base 10, then at most
 * UINT32_MAX, with librpma's examples' messages.
 */
static inline int
parse_imm(const char *arg, uint32_t *imm)
{
	errno = 0;
	unsigned long v = strtoul(arg, NULL, 10);
	if (v == ULONG_MAX && errno == ERANGE) {
		fprintf(stderr, "strtoul() overflow\n");
		return -1;
	}
	if (v > UINT32_MAX) {
		fprintf(stderr, "The provided immediate data is too big "
				"(%lu > %u)\n", v, UINT32_MAX);
		return -1;
	}
	*imm = (uint32_t)v;
	return 0;
}

/*
 * Wait for one completion on cq and check it as examples 10 and 11 do: a
 * success, of the operation want.
 */
static inline int
wait_for_imm_wc(struct rpma_cq *cq, enum ibv_wc_opcode want, struct ibv_wc *wc)
{
	int ret = wait_for_one_wc(cq, wc);
	if (ret)
		return ret;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Received unexpected completion: %s\n",
				ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->opcode != want) {
		fprintf(stderr, "Received unexpected type of operation "
				"(%d != %d)\n", wc->opcode, want);
		return -1;
	}
	return 0;
}

/*
 * The hello structure of examples 03, 04, 05 and 09: lang (u32) then a
 * 1024-byte string; the transfers move the whole string.
 */
enum lang_t { en, es };

#define HELLO_STR_OFFSET 4
#define HELLO_STR_SIZE KILOBYTE

struct hello_t {
	enum lang_t lang;
	char str[HELLO_STR_SIZE];
};

_Static_assert(sizeof(struct hello_t) == 1028, "hello_t is 1028 bytes");

static const char *hello_str[] = {
	[en] = "Hello world!",
	[es] = "\u00A1Hola Mundo!",
};

static inline void
write_hello_str(struct hello_t *hello, enum lang_t lang)
{
	hello->lang = lang;
	strncpy(hello->str, hello_str[lang], HELLO_STR_SIZE - 1);
	hello->str[HELLO_STR_SIZE - 1] = '\0';
}

static inline void
translate(struct hello_t *hello)
{
	printf("translating...\n");
	write_hello_str(hello, (enum lang_t)((hello->lang + 1) % 2));
}

/* the message of examples 08: a u64 counter; this one ends the exchange */
#define I_M_DONE UINT64_MAX
#define MSG_SIZE sizeof(uint64_t)

#endif /* INTEROP_COMMON_H */
