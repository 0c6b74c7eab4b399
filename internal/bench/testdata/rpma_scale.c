// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2026, The gorpma authors */
/* See LICENSE at the root of github.com/gorpma/rpma. */

// rpma_scale: aggregate QD1 write rate and memory per connection of C
// librpma with many connections, measured the way conn's BenchmarkScale
// (conn/bench_scale_linux_test.go) measures the Go library, so that one
// parser (internal/bench) reads both.
//
//	cc -O2 -Wall -Wextra -Werror -o rpma_scale rpma_scale.c -lrpma
//	rpma_scale [-c CONNS] [-n ITERS] [-t SECONDS] [-p PORT] IP
//
// -c: the number of connections (default 16); -n: measured completed
// writes (default 2000); -t: SIGALRM ends the process after SECONDS
// (default 300); -p: the port to listen on and connect to (default 7404).
//
// One process, two peers on the device of IP (a server peer with a
// listening endpoint and a client peer, as in the Go benchmark), librpma's
// default connection configuration (each connection has its own CQ with
// its own completion channel: librpma 1.2.0 cannot share a CQ between
// connections). A thread accepts the CONNS incoming requests while the
// main thread makes them one after the other; then the main thread waits
// for every connection's ESTABLISHED event. The server registers a 16 KiB
// region (WRITE_DST), the client a 16 KiB source (WRITE_SRC).
//
// The measured loop, in the main thread alone: one 64-byte
// COMPLETION_ALWAYS rpma_write outstanding on each client connection (QD1
// per connection); the thread sweeps the connections' CQs with
// rpma_cq_get_wc (non-blocking) and, for each completion, posts that
// connection's next write. An iteration is one completed write: ns/op is
// the loop's wall time divided by ITERS, ops/s its inverse.
//
// Memory: B/conn is the growth of VmRSS (/proc/self/status) from before
// the first connection request to after the last ESTABLISHED, divided by
// CONNS: per connection with both of its ends (both are in this process),
// the provider's mmapped QP and CQ rings included. malloc-B/conn is the
// growth of malloc's in-use bytes (mallinfo2) divided by CONNS; fds/conn
// the growth of open descriptors; setup-s the set-up's wall time.
//
// Output, one line in Go's benchmark format:
//
//	BenchmarkScale/ConnsN ITERS NS ns/op OPS ops/s B B/conn ...
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <librpma.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define REGION (1 << 14)
#define SLOTS (REGION / 64)

static void die(const char *what, int ret)
{
	fprintf(stderr, "rpma_scale: %s: %s (%d)\n", what, rpma_err_2str(ret), ret);
	exit(1);
}

#define CHECK(call)                          \
	do {                                 \
		int ret_ = (call);           \
		if (ret_)                    \
			die(#call, ret_);    \
	} while (0)

static void log_fn(enum rpma_log_level level, const char *file, const int line,
		   const char *func, const char *fmt, ...)
{
	if (level > RPMA_LOG_LEVEL_WARNING)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "librpma: %s:%d %s: %s\n", file ? file : "?", line, func ? func : "?",
		msg);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* rss returns the process's VmRSS in bytes. */
static double rss(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL) {
		perror("rpma_scale: /proc/self/status");
		exit(1);
	}
	char line[256];
	double kb = -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %lf kB", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0) {
		fprintf(stderr, "rpma_scale: no VmRSS in /proc/self/status\n");
		exit(1);
	}
	return kb * 1024;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL) {
		perror("rpma_scale: /proc/self/fd");
		exit(1);
	}
	int n = 0;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the directory's own descriptor */
}

struct server {
	struct rpma_ep *ep;
	struct rpma_conn **conns;
	int n;
};

/* accept_all takes the next n connection requests and accepts them. */
static void *accept_all(void *arg)
{
	struct server *s = arg;
	for (int i = 0; i < s->n; i++) {
		struct rpma_conn_req *req = NULL;
		CHECK(rpma_ep_next_conn_req(s->ep, NULL, &req));
		CHECK(rpma_conn_req_connect(&req, NULL, &s->conns[i]));
	}
	return NULL;
}

static void expect_event(struct rpma_conn *c, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(c, &ev));
	if (ev != want) {
		fprintf(stderr, "rpma_scale: unexpected event: %s\n", rpma_utils_conn_event_2str(ev));
		exit(1);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: rpma_scale [-c CONNS] [-n ITERS] [-t SECONDS] [-p PORT] IP\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int n = 16;
	uint64_t iters = 2000;
	unsigned timeout = 300;
	const char *port = "7404";
	int opt;
	while ((opt = getopt(argc, argv, "c:n:t:p:")) != -1) {
		switch (opt) {
		case 'c':
			n = atoi(optarg);
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 10);
			break;
		case 't':
			timeout = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			port = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || iters == 0 || n < 1)
		usage();
	const char *ip = argv[optind];
	alarm(timeout); /* SIGALRM ends a run that hangs */

	/* As the Go benchmark does: lift the open files limit if allowed. */
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536) {
		struct rlimit want = {65536, lim.rlim_max > 65536 ? lim.rlim_max : 65536};
		if (setrlimit(RLIMIT_NOFILE, &want) != 0) {
			lim.rlim_cur = lim.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &lim);
		}
	}

	CHECK(rpma_log_set_function(log_fn));
	struct ibv_context *dev = NULL;
	CHECK(rpma_utils_get_ibv_context(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
	struct rpma_peer *speer = NULL, *cpeer = NULL;
	CHECK(rpma_peer_new(dev, &speer));
	CHECK(rpma_peer_new(dev, &cpeer));
	struct server srv = {.n = n};
	CHECK(rpma_ep_listen(speer, ip, port, &srv.ep));

	void *mem = mmap(NULL, 2 * REGION, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	if (mem == MAP_FAILED) {
		perror("rpma_scale: mmap");
		return 1;
	}
	struct rpma_mr_local *dst = NULL, *src = NULL;
	CHECK(rpma_mr_reg(speer, mem, REGION, RPMA_MR_USAGE_WRITE_DST, &dst));
	CHECK(rpma_mr_reg(cpeer, (char *)mem + REGION, REGION, RPMA_MR_USAGE_WRITE_SRC, &src));
	size_t desc_size = 0;
	CHECK(rpma_mr_get_descriptor_size(dst, &desc_size));
	char desc[64];
	if (desc_size > sizeof(desc)) {
		fprintf(stderr, "rpma_scale: descriptor of %zu bytes\n", desc_size);
		return 1;
	}
	CHECK(rpma_mr_get_descriptor(dst, desc));
	struct rpma_mr_remote *rdst = NULL;
	CHECK(rpma_mr_remote_from_descriptor(desc, desc_size, &rdst));

	struct rpma_conn **clients = calloc((size_t)n, sizeof(*clients));
	struct rpma_cq **cqs = calloc((size_t)n, sizeof(*cqs));
	srv.conns = calloc((size_t)n, sizeof(*srv.conns));
	if (clients == NULL || cqs == NULL || srv.conns == NULL) {
		perror("rpma_scale: calloc");
		return 1;
	}

	/* set-up, with the memory it takes */
	double rss0 = rss();
	struct mallinfo2 mi0 = mallinfo2();
	int fds0 = open_fds();
	uint64_t s0 = now_ns();
	pthread_t th;
	if (pthread_create(&th, NULL, accept_all, &srv) != 0) {
		perror("rpma_scale: pthread_create");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct rpma_conn_req *req = NULL;
		CHECK(rpma_conn_req_new(cpeer, ip, port, NULL, &req));
		CHECK(rpma_conn_req_connect(&req, NULL, &clients[i]));
	}
	pthread_join(th, NULL);
	for (int i = 0; i < n; i++)
		expect_event(clients[i], RPMA_CONN_ESTABLISHED);
	for (int i = 0; i < n; i++)
		expect_event(srv.conns[i], RPMA_CONN_ESTABLISHED);
	uint64_t s1 = now_ns();
	double rss1 = rss();
	struct mallinfo2 mi1 = mallinfo2();
	int fds1 = open_fds();
	for (int i = 0; i < n; i++)
		CHECK(rpma_conn_get_cq(clients[i], &cqs[i]));

	/* the measured loop */
	uint64_t seq = 0;
	for (int i = 0; i < n; i++, seq++)
		CHECK(rpma_write(clients[i], rdst, (size_t)(i % SLOTS) * 64, src,
				 (size_t)(i % SLOTS) * 64, 64, RPMA_F_COMPLETION_ALWAYS,
				 (const void *)(uintptr_t)seq));
	struct ibv_wc wc;
	int next = 0;
	uint64_t t0 = now_ns();
	for (uint64_t done = 0; done < iters;) {
		int got = 0;
		int ret = rpma_cq_get_wc(cqs[next], 1, &wc, &got);
		if (ret && ret != RPMA_E_NO_COMPLETION)
			die("rpma_cq_get_wc", ret);
		if (ret == 0 && got == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_scale: completion failed: status %d\n",
					(int)wc.status);
				return 1;
			}
			CHECK(rpma_write(clients[next], rdst, (size_t)(next % SLOTS) * 64, src,
					 (size_t)(next % SLOTS) * 64, 64, RPMA_F_COMPLETION_ALWAYS,
					 (const void *)(uintptr_t)seq));
			seq++;
			done++;
		}
		next = (next + 1) % n;
	}
	uint64_t t1 = now_ns();
	/* the writes still outstanding complete before the teardown */
	for (int i = 0; i < n; i++) {
		for (;;) {
			int got = 0;
			int ret = rpma_cq_get_wc(cqs[i], 1, &wc, &got);
			if (ret && ret != RPMA_E_NO_COMPLETION)
				die("rpma_cq_get_wc", ret);
			if (ret == 0 && got == 1)
				break;
		}
	}

	double secs = (double)(t1 - t0) / 1e9;
	printf("# rpma_scale: %d connections, own CQs, one polling thread\n", n);
	printf("BenchmarkScale/Conns%d\t%8" PRIu64 "\t%12.0f ns/op\t%10.0f ops/s\t%10.0f B/conn"
	       "\t%10.0f malloc-B/conn\t%6.2f fds/conn\t%8.3f setup-s\n",
	       n, iters, (double)(t1 - t0) / (double)iters, (double)iters / secs,
	       (rss1 - rss0) / n, ((double)mi1.uordblks - (double)mi0.uordblks) / n,
	       (double)(fds1 - fds0) / n, (double)(s1 - s0) / 1e9);
	fflush(stdout);

	/*
	 * Teardown: the clients disconnect, each server reads CLOSED and
	 * answers with its own disconnect (without it the clients' CLOSED
	 * would wait for the CM's timeout), each client reads CLOSED.
	 */
	for (int i = 0; i < n; i++)
		CHECK(rpma_conn_disconnect(clients[i]));
	for (int i = 0; i < n; i++) {
		expect_event(srv.conns[i], RPMA_CONN_CLOSED);
		CHECK(rpma_conn_disconnect(srv.conns[i]));
	}
	for (int i = 0; i < n; i++) {
		expect_event(clients[i], RPMA_CONN_CLOSED);
		CHECK(rpma_conn_delete(&clients[i]));
		CHECK(rpma_conn_delete(&srv.conns[i]));
	}
	free(clients);
	free(cqs);
	free(srv.conns);
	CHECK(rpma_mr_remote_delete(&rdst));
	CHECK(rpma_mr_dereg(&src));
	CHECK(rpma_mr_dereg(&dst));
	munmap(mem, 2 * REGION);
	CHECK(rpma_ep_shutdown(&srv.ep));
	CHECK(rpma_peer_delete(&cpeer));
	CHECK(rpma_peer_delete(&speer));
	return 0;
}
