// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2026, The gorpma authors */
/* See LICENSE at the root of github.com/gorpma/rpma. */

/*
 * gpspm-codec.c -- protobuf-c's side of the GPSPM byte-for-byte check
 *
 * A filter for examples/gpspm_protobufc_linux_test.go: it packs and unpacks
 * GPSPM_flush_request and GPSPM_flush_response with the code protoc-c
 * generated from GPSPM_flush.proto, the code the 09 programs use, so that
 * the test can compare its bytes with the Go encoder's. One command a line
 * on stdin, one answer a line on stdout (numbers in any base strtoull
 * reads; bytes in lower-case hex, "-" for none):
 *
 *	pack-request <offset> <length> <op_context>  ->  <hex>
 *	pack-response <op_context>                   ->  <hex>
 *	unpack-request <hex>     ->  <offset> <length> <op_context> | error
 *	unpack-response <hex>    ->  <op_context> | error
 *
 * (numbers out in decimal). Builds without librpma:
 *	cc -o gpspm-codec gpspm-codec.c GPSPM_flush.pb-c.c -lprotobuf-c
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "GPSPM_flush.pb-c.h"

#define MAX_BYTES 1024

static void
print_hex(const uint8_t *b, size_t n)
{
	if (n == 0)
		fputs("-", stdout);
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
	putchar('\n');
}

/* hex (or "-") into b; the number of bytes, or -1 */
static long
parse_hex(const char *hex, uint8_t *b)
{
	if (strcmp(hex, "-") == 0)
		return 0;
	size_t n = strlen(hex);
	if (n % 2 || n / 2 > MAX_BYTES)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		b[i] = (uint8_t)v;
	}
	return (long)(n / 2);
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;
	*v = strtoull(s, &end, 0);
	return *s == '\0' || *end != '\0' ? -1 : 0;
}

int
main(void)
{
	char line[4 * MAX_BYTES];
	static uint8_t buf[MAX_BYTES];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *argv[5];
		int argc = 0;
		for (char *tok = strtok(line, " \t\n"); tok != NULL && argc < 5;
				tok = strtok(NULL, " \t\n"))
			argv[argc++] = tok;
		if (argc == 0)
			continue;

		if (strcmp(argv[0], "pack-request") == 0 && argc == 4) {
			GPSPMFlushRequest req = GPSPM_FLUSH_REQUEST__INIT;
			if (parse_u64(argv[1], &req.offset) ||
					parse_u64(argv[2], &req.length) ||
					parse_u64(argv[3], &req.op_context))
				goto bad;
			size_t n = gpspm_flush_request__get_packed_size(&req);
			if (n > MAX_BYTES ||
					gpspm_flush_request__pack(&req, buf) != n)
				goto bad;
			print_hex(buf, n);
		} else if (strcmp(argv[0], "pack-response") == 0 &&
				argc == 2) {
			GPSPMFlushResponse resp = GPSPM_FLUSH_RESPONSE__INIT;
			if (parse_u64(argv[1], &resp.op_context))
				goto bad;
			size_t n = gpspm_flush_response__get_packed_size(&resp);
			if (n > MAX_BYTES ||
					gpspm_flush_response__pack(&resp, buf) != n)
				goto bad;
			print_hex(buf, n);
		} else if (strcmp(argv[0], "unpack-request") == 0 &&
				argc == 2) {
			long n = parse_hex(argv[1], buf);
			if (n < 0)
				goto bad;
			GPSPMFlushRequest *req = gpspm_flush_request__unpack(
					NULL, (size_t)n, buf);
			if (req == NULL) {
				puts("error");
				continue;
			}
			printf("%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
					req->offset, req->length,
					req->op_context);
			gpspm_flush_request__free_unpacked(req, NULL);
		} else if (strcmp(argv[0], "unpack-response") == 0 &&
				argc == 2) {
			long n = parse_hex(argv[1], buf);
			if (n < 0)
				goto bad;
			GPSPMFlushResponse *resp = gpspm_flush_response__unpack(
					NULL, (size_t)n, buf);
			if (resp == NULL) {
				puts("error");
				continue;
			}
			printf("%" PRIu64 "\n", resp->op_context);
			gpspm_flush_response__free_unpacked(resp, NULL);
		} else {
			goto bad;
		}
		continue;
bad:
		fprintf(stderr, "gpspm-codec: bad command: %s\n", argv[0]);
		return 2;
	}
	return 0;
}
