// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2026, The gorpma authors */
/* See LICENSE at the root of github.com/gorpma/rpma. */

// rpma_lat: per-operation latency of librpma's data path, measured the way
// conn/bench_linux_test.go (BenchmarkOps, BenchmarkPostUnsignaled) measures
// the Go library, so that the two can be compared side by side in one VM.
//
//	cc -O2 -Wall -Wextra -Werror -o rpma_lat rpma_lat.c -lrpma
//	rpma_lat [-n ITERS] [-w WARMUP] [-t SECONDS] [-p PORT] [-o OP] IP
//	rpma_lat -s [-t SECONDS] [-p PORT] IP
//	rpma_lat -c SERVER-IP [-n ITERS] [-w WARMUP] [-t SECONDS] [-p PORT] IP
//
// -n: measured iterations per operation (default 1000); -w: untimed ones
// before them (default 0); -t: SIGALRM ends the process after SECONDS
// (default 300); -p: the port to listen on and connect to (default 7204);
// -o: run only the operation of that name (Write64, Read64, ...), as
// scripts/bench-sched.sh does to trace one operation.
//
// Without -s or -c (the default, which scripts/bench.sh runs) both ends
// live in this process, as described below. The other two modes split
// them over two nodes (scripts/bench-2node.sh), so that completions come
// from a wire rather than from rxe's loopback:
//
//   - -s, server only: listens on IP:PORT and accepts one connection at a
//     time, sending the 21-byte descriptor of its region (dst below) as
//     the connection's private data, as librpma's examples do; it posts
//     nothing and waits for the client to disconnect, answers with its
//     own disconnect, then accepts the next connection, until SIGALRM or
//     SIGTERM. One server thus serves many rounds of Go and C clients
//     (conn's BenchmarkOps with RPMA_BENCH_SERVER=SERVER-IP:PORT), so that
//     only the client library differs. It prints "# rpma_lat: serving"
//     once it listens.
//   - -c SERVER-IP, client only: connects from IP's device to
//     SERVER-IP:PORT, takes rdst from the private data, and runs the
//     operations below but SendRecv64 and PostUnsignaled (the server posts
//     no receives).
//
// One process, one peer (one protection domain) on the device of IP: a
// listening endpoint, a thread that accepts the incoming connection request,
// and an outgoing request from the main thread, all with librpma's default
// configuration (CQ 10, SQ 10, RQ 10, no receive CQ, a completion channel
// per CQ). One 64 KiB anonymous shared mapping is registered as two halves
// with every usage but FLUSH_TYPE_PERSISTENT: src (the first half) is the
// local source or destination, dst (the second half) is the remote region,
// reached through its descriptor. Then the main thread alone runs the
// operations below; each posts through the client connection and
// busy-polls (rpma_cq_get_wc, 8 entries at a time, no rpma_cq_wait) until
// its completion arrives, exactly as the Go benchmark does:
//
//	Write64           rpma_write 64 B at dst+0, COMPLETION_ALWAYS
//	Read64            rpma_read 64 B from dst+64 into src+0, ALWAYS
//	Flush             rpma_flush dst+0, 64 B, VISIBILITY, ALWAYS
//	WriteThenFlush64  rpma_write 64 B ON_ERROR, then rpma_flush ALWAYS
//	AtomicWrite       rpma_atomic_write 8 B at dst+128, ALWAYS
//	Write64Wait       rpma_write 64 B at dst+0, ALWAYS, then rpma_cq_wait
//	                  and rpma_cq_get_wc until its completion (event mode,
//	                  as Go's BenchmarkOps/Write64Wait)
//	SendRecv64        rpma_recv 64 B on the server (dst+256), rpma_send
//	                  64 B from the client, ALWAYS; poll the client's CQ
//	                  for the send, then the server's CQ for the receive
//	PostUnsignaled    rpma_write 8 B ON_ERROR; every 5th (SQ size / 2) is
//	                  posted ALWAYS instead, and when SQ-size posts are
//	                  outstanding the CQ is polled once before retrying
//
// Differences from the Go benchmark: librpma has no chained write+flush,
// so Go's WriteAndFlush64 (one post of a two-request chain) compares with
// WriteThenFlush64 here; PostUnsignaled does in the program what the Go
// library does internally (librpma leaves the periodic signaled request to
// its user); and all operations share one connection, where Go's
// BenchmarkPostUnsignaled sets up its own. Debian's librpma 1.2.0 reports
// no native atomic write even on Linux 6.12, whose rxe has the capability
// (evidently built without it), so its AtomicWrite is the emulated one
// (inline, fenced RDMA write) where the Go library's is native there.
//
// Like the Go benchmark (b.Loop with -benchtime=Nx runs exactly N
// iterations, none untimed) it runs no warm-up by default; -w adds
// untimed iterations before each operation's measured loop.
//
// Output, one line per operation, in Go's benchmark format (benchstat reads
// it): name, iterations, mean ns/op, then the median and the 99th
// percentile of the per-operation times. The mean is the wall time of the
// measured loop (clock_gettime before and after) divided by its
// iterations, as testing.B computes it; for the percentiles the loop also
// reads a time stamp after each operation (the TSC on x86: a few ns even
// where clock_gettime is a system call; both costs are printed on a
// comment line). Lines starting with '#' describe the run: among them
// whether the atomic write is native (librpma logs at INFO level when it
// is not) or emulated.
#define _GNU_SOURCE
#include <inttypes.h>
#include <librpma.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define MEM_SIZE (1 << 16)
#define HALF (MEM_SIZE / 2)
#define WC_BATCH 8
#define SQ_SIZE 10 /* librpma's default rpma_conn_cfg sq_size */

#define USAGE_ALL                                                                      \
	(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |         \
	 RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_SEND | \
	 RPMA_MR_USAGE_RECV)

struct env {
	struct rpma_conn *client, *server;
	struct rpma_cq *ccq, *scq;
	struct rpma_mr_local *src, *dst;
	struct rpma_mr_remote *rdst;
	/* PostUnsignaled's accounting */
	uint64_t posted, retired;
};

static void die(const char *what, int ret)
{
	fprintf(stderr, "rpma_lat: %s: %s (%d)\n", what, rpma_err_2str(ret), ret);
	exit(1);
}

#define CHECK(call)                          \
	do {                                 \
		int ret_ = (call);           \
		if (ret_)                    \
			die(#call, ret_);    \
	} while (0)

/* Set by log_fn when librpma says the atomic write is emulated. */
static volatile int atomic_write_emulated;

static void log_fn(enum rpma_log_level level, const char *file, const int line,
		   const char *func, const char *fmt, ...)
{
	if (level == RPMA_LOG_LEVEL_INFO && strstr(fmt, "Native atomic write") != NULL)
		atomic_write_emulated = 1;
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

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * stamp is the per-operation time stamp: the TSC on x86, whose read costs
 * little even where clock_gettime is a system call (the 6.1 guest falls
 * back to the HPET: about 1 us a call), else the clock itself. bench
 * scales stamps to ns with the loop's clock_gettime span.
 */
#if defined(__x86_64__) || defined(__i386__)
#define STAMP_NAME "rdtsc"
static inline uint64_t stamp(void)
{
	return __rdtsc();
}
#else
#define STAMP_NAME "clock_gettime"
static inline uint64_t stamp(void)
{
	return now_ns();
}
#endif

/* spin busy-polls cq until it has delivered n completions. */
static void spin(struct rpma_cq *cq, int n)
{
	struct ibv_wc wc[WC_BATCH];
	while (n > 0) {
		int got = 0;
		int ret = rpma_cq_get_wc(cq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret)
			die("rpma_cq_get_wc", ret);
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_lat: completion failed: status %d\n",
					(int)wc[i].status);
				exit(1);
			}
		}
		n -= got;
	}
}

#define CTX(i) ((const void *)(uintptr_t)(i))

static void op_write64(struct env *e, uint64_t i)
{
	CHECK(rpma_write(e->client, e->rdst, 0, e->src, 0, 64, RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	spin(e->ccq, 1);
}

/*
 * op_write64_wait completes a write through the CQ's completion channel:
 * rpma_cq_wait (read the event, ack it, re-arm) then rpma_cq_get_wc, until
 * the completion is there. An event left over from a busy-polled operation
 * only costs one more round of the loop.
 */
static void op_write64_wait(struct env *e, uint64_t i)
{
	CHECK(rpma_write(e->client, e->rdst, 0, e->src, 0, 64, RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	struct ibv_wc wc[WC_BATCH];
	for (int n = 0; n < 1;) {
		CHECK(rpma_cq_wait(e->ccq));
		int got = 0;
		int ret = rpma_cq_get_wc(e->ccq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret)
			die("rpma_cq_get_wc", ret);
		for (int k = 0; k < got; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_lat: completion failed: status %d\n",
					(int)wc[k].status);
				exit(1);
			}
		}
		n += got;
	}
}

static void op_read64(struct env *e, uint64_t i)
{
	CHECK(rpma_read(e->client, e->src, 0, e->rdst, 64, 64, RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	spin(e->ccq, 1);
}

static void op_flush(struct env *e, uint64_t i)
{
	CHECK(rpma_flush(e->client, e->rdst, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	spin(e->ccq, 1);
}

static void op_write_then_flush64(struct env *e, uint64_t i)
{
	CHECK(rpma_write(e->client, e->rdst, 0, e->src, 0, 64, RPMA_F_COMPLETION_ON_ERROR,
			 CTX(i)));
	CHECK(rpma_flush(e->client, e->rdst, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	spin(e->ccq, 1);
}

static void op_atomic_write(struct env *e, uint64_t i)
{
	char v[8] = {(char)i};
	CHECK(rpma_atomic_write(e->client, e->rdst, 128, v, RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	spin(e->ccq, 1);
}

static void op_send_recv64(struct env *e, uint64_t i)
{
	CHECK(rpma_recv(e->server, e->dst, 256, 64, CTX(i)));
	CHECK(rpma_send(e->client, e->src, 0, 64, RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	spin(e->ccq, 1);
	spin(e->scq, 1);
}

/*
 * op_post_unsignaled posts one unsignaled 8-byte write. Every SQ_SIZE/2-th
 * post is signaled, with its sequence number as context: its completion
 * retires it and every request before it (RC completes in order). With
 * SQ_SIZE requests outstanding the CQ is polled once, and the post retried.
 */
static void op_post_unsignaled(struct env *e, uint64_t i)
{
	(void)i;
	while (e->posted - e->retired >= SQ_SIZE) {
		struct ibv_wc wc[WC_BATCH];
		int got = 0;
		int ret = rpma_cq_get_wc(e->ccq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret)
			die("rpma_cq_get_wc", ret);
		for (int k = 0; k < got; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_lat: completion failed: status %d\n",
					(int)wc[k].status);
				exit(1);
			}
			if (wc[k].wr_id + 1 > e->retired)
				e->retired = wc[k].wr_id + 1;
		}
	}
	uint64_t seq = e->posted;
	int flags = (seq % (SQ_SIZE / 2) == SQ_SIZE / 2 - 1) ? RPMA_F_COMPLETION_ALWAYS
							     : RPMA_F_COMPLETION_ON_ERROR;
	CHECK(rpma_write(e->client, e->rdst, 0, e->src, 0, 8, flags, CTX(seq)));
	e->posted++;
}

/* drain waits for the outstanding signaled requests of PostUnsignaled. */
static void drain(struct env *e)
{
	uint64_t last = e->posted - e->posted % (SQ_SIZE / 2);
	while (e->retired < last) {
		struct ibv_wc wc[WC_BATCH];
		int got = 0;
		int ret = rpma_cq_get_wc(e->ccq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret)
			die("rpma_cq_get_wc", ret);
		for (int k = 0; k < got; k++)
			if (wc[k].wr_id + 1 > e->retired)
				e->retired = wc[k].wr_id + 1;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * nearest_rank returns the index, among n sorted values, of their
 * permille-th per-mille by the nearest-rank method: the
 * ceil(n * permille / 1000)-th smallest (conn/bench_linux_test.go's
 * nearestRank is the same).
 */
static uint64_t nearest_rank(uint64_t n, uint64_t permille)
{
	uint64_t r = (n * permille + 999) / 1000;
	return r ? r - 1 : 0;
}

typedef void (*op_fn)(struct env *, uint64_t);

/* bench runs op warmup times, then iters times with a clock read after each. */
/* only_op, from -o: run only the operation of that name (Write64, ...). */
static const char *only_op;

static void bench(struct env *e, const char *name, op_fn op, uint64_t iters, uint64_t warmup,
		  uint64_t *ts, uint64_t *d)
{
	const char *slash = strrchr(name, '/');
	if (only_op != NULL && strcmp(slash != NULL ? slash + 1 : name, only_op) != 0)
		return;
	for (uint64_t i = 0; i < warmup; i++)
		op(e, i);
	uint64_t t0 = now_ns();
	ts[0] = stamp();
	for (uint64_t i = 0; i < iters; i++) {
		op(e, warmup + i);
		ts[i + 1] = stamp();
	}
	uint64_t t1 = now_ns();
	for (uint64_t i = 0; i < iters; i++)
		d[i] = ts[i + 1] - ts[i];
	qsort(d, iters, sizeof(d[0]), cmp_u64);
	double mean = (double)(t1 - t0) / (double)iters;
	double scale = ts[iters] > ts[0] ? (double)(t1 - t0) / (double)(ts[iters] - ts[0]) : 1.0;
	printf("%s\t%8" PRIu64 "\t%12.0f ns/op\t%10.0f p50-ns\t%10.0f p99-ns\t%10.0f p999-ns\n", name, iters,
	       mean, (double)d[nearest_rank(iters, 500)] * scale, (double)d[nearest_rank(iters, 990)] * scale,
	       (double)d[nearest_rank(iters, 999)] * scale);
	fflush(stdout);
}

struct server {
	struct rpma_ep *ep;
	struct rpma_conn *conn;
};

/* accept_one takes the next connection request and accepts it. */
static void *accept_one(void *arg)
{
	struct server *s = arg;
	struct rpma_conn_req *req = NULL;
	CHECK(rpma_ep_next_conn_req(s->ep, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &s->conn));
	return NULL;
}

static void expect_established(struct rpma_conn *c)
{
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(c, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "rpma_lat: unexpected event: %s\n", rpma_utils_conn_event_2str(ev));
		exit(1);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: rpma_lat [-s | -c SERVER-IP] [-n ITERS] [-w WARMUP] [-t SECONDS] "
			"[-p PORT] [-o OP] IP\n");
	exit(2);
}

/* new_peer opens the device of ip, noting whether atomic writes are native. */
static struct rpma_peer *new_peer(const char *ip)
{
	CHECK(rpma_log_set_function(log_fn));
	CHECK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO));
	struct ibv_context *dev = NULL;
	CHECK(rpma_utils_get_ibv_context(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
	struct rpma_peer *peer = NULL;
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING));
	return peer;
}

/* warn reports a failed call of the server's loop, which carries on. */
static int warn(const char *what, int ret)
{
	if (ret)
		fprintf(stderr, "rpma_lat: server: %s: %s (%d)\n", what, rpma_err_2str(ret), ret);
	return ret;
}

/*
 * serve is the -s mode: one connection at a time, each given the region's
 * descriptor as private data and kept until the client disconnects. A
 * client that fails or dies ends its connection only; SIGALRM or SIGTERM
 * ends the server.
 */
static int serve(const char *ip, const char *port)
{
	struct rpma_peer *peer = new_peer(ip);
	void *mem = mmap(NULL, HALF, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("rpma_lat: mmap");
		return 1;
	}
	struct rpma_mr_local *dst = NULL;
	CHECK(rpma_mr_reg(peer, mem, HALF, USAGE_ALL, &dst));
	size_t desc_size = 0;
	CHECK(rpma_mr_get_descriptor_size(dst, &desc_size));
	char desc[64];
	if (desc_size > sizeof(desc)) {
		fprintf(stderr, "rpma_lat: descriptor of %zu bytes\n", desc_size);
		return 1;
	}
	CHECK(rpma_mr_get_descriptor(dst, desc));
	struct rpma_ep *ep = NULL;
	CHECK(rpma_ep_listen(peer, ip, port, &ep));
	printf("# rpma_lat: serving on %s:%s, descriptor of %zu bytes\n", ip, port, desc_size);
	fflush(stdout);
	for (unsigned long n = 1;; n++) {
		struct rpma_conn_req *req = NULL;
		CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
		struct rpma_conn_private_data pdata = {desc, (uint8_t)desc_size};
		struct rpma_conn *c = NULL;
		if (warn("rpma_conn_req_connect", rpma_conn_req_connect(&req, &pdata, &c)))
			continue;
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		if (warn("rpma_conn_next_event", rpma_conn_next_event(c, &ev)) == 0) {
			if (ev == RPMA_CONN_ESTABLISHED) {
				/* serve until the client goes: CLOSED or LOST */
				if (warn("rpma_conn_next_event", rpma_conn_next_event(c, &ev)) == 0)
					printf("# rpma_lat: connection %lu: %s\n", n,
					       rpma_utils_conn_event_2str(ev));
			} else {
				fprintf(stderr, "rpma_lat: server: connection %lu: %s\n", n,
					rpma_utils_conn_event_2str(ev));
			}
		}
		fflush(stdout);
		warn("rpma_conn_disconnect", rpma_conn_disconnect(c));
		warn("rpma_conn_delete", rpma_conn_delete(&c));
	}
}

/*
 * connect_remote is the -c mode's setup: a connection from peer to
 * server:port, and the server's region (rdst) from its private data.
 */
static void connect_remote(struct env *e, struct rpma_peer *peer, const char *server,
			   const char *port)
{
	struct rpma_conn_req *req = NULL;
	CHECK(rpma_conn_req_new(peer, server, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &e->client));
	expect_established(e->client);
	struct rpma_conn_private_data pdata = {0};
	CHECK(rpma_conn_get_private_data(e->client, &pdata));
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &e->rdst));
	CHECK(rpma_conn_get_cq(e->client, &e->ccq));
}

int main(int argc, char **argv)
{
	uint64_t iters = 1000, warmup = 0;
	unsigned timeout = 300;
	const char *port = "7204", *server_ip = NULL;
	int server_mode = 0;
	int opt;
	while ((opt = getopt(argc, argv, "n:w:t:p:sc:o:")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtoull(optarg, NULL, 10);
			break;
		case 'w':
			warmup = strtoull(optarg, NULL, 10);
			break;
		case 't':
			timeout = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			port = optarg;
			break;
		case 's':
			server_mode = 1;
			break;
		case 'c':
			server_ip = optarg;
			break;
		case 'o':
			only_op = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || iters == 0 || (server_mode && server_ip != NULL))
		usage();
	const char *ip = argv[optind];
	alarm(timeout); /* SIGALRM ends a run that hangs */
	if (server_mode)
		return serve(ip, port);

	struct rpma_peer *peer = new_peer(ip);
	struct server srv = {0};
	struct env e = {0};
	void *mem = NULL;
	if (server_ip != NULL) {
		connect_remote(&e, peer, server_ip, port);
		mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			   0);
		if (mem == MAP_FAILED) {
			perror("rpma_lat: mmap");
			return 1;
		}
		CHECK(rpma_mr_reg(peer, mem, HALF, USAGE_ALL, &e.src));
	} else {
		CHECK(rpma_ep_listen(peer, ip, port, &srv.ep));
		pthread_t th;
		if (pthread_create(&th, NULL, accept_one, &srv) != 0) {
			perror("rpma_lat: pthread_create");
			return 1;
		}
		struct rpma_conn_req *req = NULL;
		CHECK(rpma_conn_req_new(peer, ip, port, NULL, &req));
		CHECK(rpma_conn_req_connect(&req, NULL, &e.client));
		pthread_join(th, NULL);
		e.server = srv.conn;
		expect_established(e.client);
		expect_established(e.server);
		CHECK(rpma_conn_get_cq(e.client, &e.ccq));
		CHECK(rpma_conn_get_cq(e.server, &e.scq));

		mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			   0);
		if (mem == MAP_FAILED) {
			perror("rpma_lat: mmap");
			return 1;
		}
		CHECK(rpma_mr_reg(peer, mem, HALF, USAGE_ALL, &e.src));
		CHECK(rpma_mr_reg(peer, (char *)mem + HALF, HALF, USAGE_ALL, &e.dst));
		size_t desc_size = 0;
		CHECK(rpma_mr_get_descriptor_size(e.dst, &desc_size));
		char desc[64];
		if (desc_size > sizeof(desc)) {
			fprintf(stderr, "rpma_lat: descriptor of %zu bytes\n", desc_size);
			return 1;
		}
		CHECK(rpma_mr_get_descriptor(e.dst, desc));
		CHECK(rpma_mr_remote_from_descriptor(desc, desc_size, &e.rdst));
	}

	uint64_t *ts = calloc(iters + 1, sizeof(uint64_t));
	uint64_t *d = calloc(iters, sizeof(uint64_t));
	if (ts == NULL || d == NULL) {
		perror("rpma_lat: calloc");
		return 1;
	}
	/* the cost of the clocks: the best of 3 rounds of 10000 reads */
	double clock_ns = 1e18, stamp_ns = 1e18;
	for (int r = 0; r < 3; r++) {
		uint64_t c0 = now_ns();
		for (int i = 0; i < 10000; i++)
			(void)now_ns();
		uint64_t c1 = now_ns();
		for (int i = 0; i < 10000; i++)
			(void)stamp();
		uint64_t c2 = now_ns();
		if ((double)(c1 - c0) / 10000.0 < clock_ns)
			clock_ns = (double)(c1 - c0) / 10000.0;
		if ((double)(c2 - c1) / 10000.0 < stamp_ns)
			stamp_ns = (double)(c2 - c1) / 10000.0;
	}
	struct utsname u;
	uname(&u);
	printf("# rpma_lat: kernel %s, %" PRIu64 " iterations after %" PRIu64 " warm-up\n",
	       u.release, iters, warmup);
	if (server_ip != NULL)
		printf("# client of %s:%s (two nodes)\n", server_ip, port);
	printf("# atomic write: %s; flush: emulated (librpma 1.2.0 has no native flush)\n",
	       atomic_write_emulated ? "emulated (inline RDMA write)" : "native");
	printf("# clocks: clock_gettime %.0f ns a call (twice per run), " STAMP_NAME
	       " %.0f ns a call (once per operation)\n",
	       clock_ns, stamp_ns);

	bench(&e, "BenchmarkOps/Write64", op_write64, iters, warmup, ts, d);
	bench(&e, "BenchmarkOps/Read64", op_read64, iters, warmup, ts, d);
	bench(&e, "BenchmarkOps/Flush", op_flush, iters, warmup, ts, d);
	bench(&e, "BenchmarkOps/WriteThenFlush64", op_write_then_flush64, iters, warmup, ts, d);
	bench(&e, "BenchmarkOps/AtomicWrite", op_atomic_write, iters, warmup, ts, d);
	bench(&e, "BenchmarkOps/Write64Wait", op_write64_wait, iters, warmup, ts, d);
	if (server_ip != NULL) {
		free(ts);
		free(d);
		/* the server answers the disconnect with its own: then CLOSED */
		enum rpma_conn_event ev;
		CHECK(rpma_conn_disconnect(e.client));
		CHECK(rpma_conn_next_event(e.client, &ev));
		CHECK(rpma_conn_delete(&e.client));
		CHECK(rpma_mr_remote_delete(&e.rdst));
		CHECK(rpma_mr_dereg(&e.src));
		munmap(mem, MEM_SIZE);
		CHECK(rpma_peer_delete(&peer));
		return 0;
	}
	bench(&e, "BenchmarkOps/SendRecv64", op_send_recv64, iters, warmup, ts, d);
	bench(&e, "BenchmarkPostUnsignaled", op_post_unsignaled, iters, warmup, ts, d);
	drain(&e);

	free(ts);
	free(d);
	/*
	 * The server answers the client's disconnect request with its own
	 * disconnect; without the answer the client's CLOSED event would wait
	 * for the CM's timeout (about 100 s).
	 */
	enum rpma_conn_event ev;
	CHECK(rpma_conn_disconnect(e.client));
	CHECK(rpma_conn_next_event(e.server, &ev));
	CHECK(rpma_conn_disconnect(e.server));
	CHECK(rpma_conn_next_event(e.client, &ev));
	CHECK(rpma_conn_delete(&e.client));
	CHECK(rpma_conn_delete(&e.server));
	CHECK(rpma_mr_remote_delete(&e.rdst));
	CHECK(rpma_mr_dereg(&e.src));
	CHECK(rpma_mr_dereg(&e.dst));
	munmap(mem, MEM_SIZE);
	CHECK(rpma_ep_shutdown(&srv.ep));
	CHECK(rpma_peer_delete(&peer));
	return 0;
}
