// SPDX-License-Identifier: BSD-3-Clause
/* Copyright 2026, The gorpma authors */
/* See LICENSE at the root of github.com/gorpma/rpma. */

// rpma_bw: bandwidth against queue depth and latency against message size
// of librpma's writes and reads, measured the way conn/bench_bw_linux_test.go
// (BenchmarkBandwidth, BenchmarkLatencySize) measures the Go library, with
// the same benchmark names, so that one parser reads both.
//
//	cc -O2 -Wall -Wextra -Werror -o rpma_bw rpma_bw.c -lrpma
//	rpma_bw [-b BYTES] [-m MIN] [-M MAX] [-s bw|lat|all|goroutines] [-t SECONDS] [-p PORT] IP
//
// Each sub-benchmark runs clamp(BYTES / size, MIN, MAX) requests (defaults
// 8 MiB, 8 and 2000): a fixed byte budget, so that 1 MiB does few requests
// and 4 KiB many. scripts/bench-bw.sh gives the Go benchmarks the same
// counts (-test.benchtime Nx). Like testing.B, which runs every benchmark
// once with N=1 before the measured run, each sub-benchmark first does one
// untimed request. -s picks the benchmarks (default all); -t: SIGALRM ends
// the process after SECONDS (default 300); -p: the port (default 7205).
//
// Setup as in rpma_lat.c: one process, one peer on the device of IP, a
// listening endpoint, a thread accepting the incoming request, an outgoing
// one from the main thread; here both with SQ and CQ of 16 entries (the
// deepest queue). One 32 MiB anonymous shared mapping is registered as two
// 16 MiB halves: src (local) and dst (the remote region, through its
// descriptor). Request i uses offset (i mod (16 MiB / size)) × size on
// both sides, so that outstanding requests never overlap.
//
//	BenchmarkBandwidth/{Write,Read}/{4KiB,64KiB,1MiB}/QD{1,4,16}
//	    N rpma_write (src to dst) or rpma_read (dst into src), each
//	    COMPLETION_ALWAYS: QD posted, then one more posted for each that
//	    completes (rpma_cq_get_wc, busy-polled, up to 16 at a time), until
//	    N have completed. ns/op is the loop's time / N; MB/s is
//	    size × N / time, in 10^6 bytes per second, as Go's b.SetBytes.
//	BenchmarkLatencySize/{Write,Read}/{8B,64B,512B,4KiB,32KiB,256KiB,1MiB}
//	    one request at a time (QD 1), with a time stamp after each (the
//	    TSC, as the Go benchmark's tsc.Read, scaled to ns by the loop's
//	    clock_gettime span): ns/op is the mean, then MB/s, and the median
//	    and 99th percentile of the per-request times.
//	BenchmarkGoroutines/C/{Write64,Read64,WriteAndPersist64,WriteAndPersist4K}/QD={1,4,16,64}
//	    (-s goroutines only, MAX requests each) the baseline of
//	    conn/bench_goroutines_linux_test.go (scripts/bench-goroutines.sh):
//	    what G goroutines' operations on one connection cost when one
//	    thread keeps G of them in flight with librpma, busy-polled. A
//	    write-and-persist is an rpma_write (completion on error) and an
//	    rpma_flush to persistence (signaled), the peer configured for
//	    direct write to PMem. The connection's queues are 128 and its CQ
//	    64 in this mode. ns/op is the loop's time / N; p50, p99 and p99.9
//	    are each request's time from its post to its completion's poll,
//	    stamped, at the nearest rank as in the Go benchmark.
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

#define REGION (16u << 20)
#define MAX_QD 16
#define GOR_QD 64	/* the goroutines mode's deepest queue */
#define GOR_SQ 128	/* a write-and-persist is two requests */
#define USAGE (RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | \
	       RPMA_MR_USAGE_WRITE_DST)

struct env {
	struct rpma_conn *client, *server;
	struct rpma_cq *cq;
	struct rpma_mr_local *src, *dst;
	struct rpma_mr_remote *rdst;
};

static void die(const char *what, int ret)
{
	fprintf(stderr, "rpma_bw: %s: %s (%d)\n", what, rpma_err_2str(ret), ret);
	exit(1);
}

#define CHECK(call)                       \
	do {                              \
		int ret_ = (call);        \
		if (ret_)                 \
			die(#call, ret_); \
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

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * stamp is the per-request time stamp: the TSC on x86 (a few ns, where
 * clock_gettime is a system call on the 6.1 guest), as Go's tsc.Read and
 * rpma_lat.c; else the clock itself.
 */
#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t stamp(void)
{
	return __rdtsc();
}
#else
static inline uint64_t stamp(void)
{
	return now_ns();
}
#endif

#define CTX(i) ((const void *)(uintptr_t)(i))

/* post posts request i: a write or read of size bytes, signaled. */
static void post(struct env *e, int read, size_t size, uint64_t i)
{
	size_t off = (size_t)(i % (REGION / size)) * size;
	if (read)
		CHECK(rpma_read(e->client, e->src, off, e->rdst, off, size,
				RPMA_F_COMPLETION_ALWAYS, CTX(i)));
	else
		CHECK(rpma_write(e->client, e->rdst, off, e->src, off, size,
				 RPMA_F_COMPLETION_ALWAYS, CTX(i)));
}

/*
 * reap_into busy-polls the CQ until it has completions, up to max of them
 * into wc, each checked; returns how many.
 */
static uint64_t reap_into(struct env *e, struct ibv_wc *wc, int max)
{
	for (;;) {
		int got = 0;
		int ret = rpma_cq_get_wc(e->cq, max, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret)
			die("rpma_cq_get_wc", ret);
		for (int k = 0; k < got; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_bw: completion failed: status %d\n",
					(int)wc[k].status);
				exit(1);
			}
		}
		if (got > 0)
			return (uint64_t)got;
	}
}

/* reap is reap_into for a caller that needs only the count. */
static uint64_t reap(struct env *e)
{
	struct ibv_wc wc[MAX_QD];
	return reap_into(e, wc, MAX_QD);
}

/* run does n requests with up to qd outstanding, each completed. */
static void run(struct env *e, int read, size_t size, uint64_t qd, uint64_t n)
{
	uint64_t posted = 0, done = 0;
	while (done < n) {
		while (posted < n && posted - done < qd)
			post(e, read, size, posted++);
		done += reap(e);
	}
}

static uint64_t budget = 8u << 20, min_iters = 8, max_iters = 2000;

static uint64_t iters_for(size_t size)
{
	uint64_t n = budget / size;
	if (n < min_iters)
		n = min_iters;
	if (n > max_iters)
		n = max_iters;
	return n;
}

static const char *size_name(size_t n, char *buf, size_t len)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, len, "%zuMiB", n >> 20);
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, len, "%zuKiB", n >> 10);
	else
		snprintf(buf, len, "%zuB", n);
	return buf;
}

static const char *const kernels[] = {"Write", "Read"};

static void bench_bandwidth(struct env *e)
{
	static const size_t sizes[] = {4u << 10, 64u << 10, 1u << 20};
	static const uint64_t depths[] = {1, 4, 16};
	char sz[32];
	for (int k = 0; k < 2; k++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			for (size_t q = 0; q < sizeof(depths) / sizeof(depths[0]); q++) {
				uint64_t n = iters_for(sizes[s]);
				run(e, k, sizes[s], depths[q], 1); /* testing.B's run1 */
				uint64_t t0 = now_ns();
				run(e, k, sizes[s], depths[q], n);
				uint64_t dt = now_ns() - t0;
				printf("BenchmarkBandwidth/%s/%s/QD%" PRIu64 "\t%8" PRIu64
				       "\t%12.0f ns/op\t%8.2f MB/s\n",
				       kernels[k], size_name(sizes[s], sz, sizeof(sz)), depths[q], n,
				       (double)dt / (double)n,
				       (double)sizes[s] * (double)n / 1e6 / ((double)dt / 1e9));
				fflush(stdout);
			}
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void bench_latency(struct env *e)
{
	static const size_t sizes[] = {8, 64, 512, 4u << 10, 32u << 10, 256u << 10, 1u << 20};
	char sz[32];
	uint64_t *d = calloc(max_iters > min_iters ? max_iters : min_iters, sizeof(uint64_t));
	if (d == NULL) {
		perror("rpma_bw: calloc");
		exit(1);
	}
	for (int k = 0; k < 2; k++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			uint64_t n = iters_for(sizes[s]);
			run(e, k, sizes[s], 1, 1); /* testing.B's run1 */
			uint64_t t0 = now_ns();
			uint64_t first = stamp(), last = first;
			for (uint64_t i = 0; i < n; i++) {
				post(e, k, sizes[s], i);
				reap(e);
				uint64_t now = stamp();
				d[i] = now - last;
				last = now;
			}
			uint64_t dt = now_ns() - t0;
			/* stamps to ns: the loop's clock_gettime span over its stamps */
			double scale = last > first ? (double)dt / (double)(last - first) : 1.0;
			qsort(d, n, sizeof(d[0]), cmp_u64);
			/* the indexes of Go's latencies.report: len/2 and len*99/100 */
			printf("BenchmarkLatencySize/%s/%s\t%8" PRIu64
			       "\t%12.0f ns/op\t%8.2f MB/s\t%10" PRIu64 " p50-ns\t%10" PRIu64
			       " p99-ns\n",
			       kernels[k], size_name(sizes[s], sz, sizeof(sz)), n,
			       (double)dt / (double)n,
			       (double)sizes[s] * (double)n / 1e6 / ((double)dt / 1e9),
			       (uint64_t)((double)d[n / 2] * scale),
			       (uint64_t)((double)d[n * 99 / 100] * scale));
			fflush(stdout);
		}
	}
	free(d);
}

/*
 * The goroutines mode: n operations of kind k, up to qd in flight, each
 * posted at a stamp kept by its index (its op context), its time taken
 * when its completion is polled.
 */
enum gor_kind { GOR_WRITE, GOR_READ, GOR_PERSIST };

static void gor_post(struct env *e, enum gor_kind k, size_t size, uint64_t i)
{
	size_t off = (size_t)(i % GOR_QD) * 4096;
	switch (k) {
	case GOR_WRITE:
		CHECK(rpma_write(e->client, e->rdst, off, e->src, off, size,
				 RPMA_F_COMPLETION_ALWAYS, CTX(i)));
		break;
	case GOR_READ:
		CHECK(rpma_read(e->client, e->src, off, e->rdst, off, size,
				RPMA_F_COMPLETION_ALWAYS, CTX(i)));
		break;
	case GOR_PERSIST:
		CHECK(rpma_write(e->client, e->rdst, off, e->src, off, size,
				 RPMA_F_COMPLETION_ON_ERROR, NULL));
		CHECK(rpma_flush(e->client, e->rdst, off, size, RPMA_FLUSH_TYPE_PERSISTENT,
				 RPMA_F_COMPLETION_ALWAYS, CTX(i)));
		break;
	}
}

static void gor_run(struct env *e, enum gor_kind k, size_t size, uint64_t qd, uint64_t n,
		    uint64_t *posted_at, uint64_t *took)
{
	struct ibv_wc wc[GOR_QD];
	uint64_t posted = 0, done = 0;
	while (done < n) {
		while (posted < n && posted - done < qd) {
			posted_at[posted] = stamp();
			gor_post(e, k, size, posted);
			posted++;
		}
		uint64_t got = reap_into(e, wc, GOR_QD);
		uint64_t now = stamp();
		for (uint64_t j = 0; j < got; j++)
			took[wc[j].wr_id] = now - posted_at[wc[j].wr_id];
		done += got;
	}
}

/* nearest_rank is the index of the permille-th percentile of n sorted values. */
static uint64_t nearest_rank(uint64_t n, uint64_t permille)
{
	uint64_t r = (n * permille + 999) / 1000;
	return r == 0 ? 0 : r - 1;
}

static void bench_goroutines(struct env *e)
{
	static const struct {
		const char *name;
		enum gor_kind kind;
		size_t size;
	} rows[] = {
		{"Write64", GOR_WRITE, 64},
		{"Read64", GOR_READ, 64},
		{"WriteAndPersist64", GOR_PERSIST, 64},
		{"WriteAndPersist4K", GOR_PERSIST, 4096},
	};
	static const uint64_t depths[] = {1, 4, 16, 64};
	uint64_t n = max_iters;
	uint64_t *posted_at = calloc(n, sizeof(uint64_t)), *took = calloc(n, sizeof(uint64_t));
	if (posted_at == NULL || took == NULL) {
		perror("rpma_bw: calloc");
		exit(1);
	}
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		for (size_t q = 0; q < sizeof(depths) / sizeof(depths[0]); q++) {
			gor_run(e, rows[r].kind, rows[r].size, depths[q], 1, posted_at, took);
			uint64_t t0 = now_ns(), s0 = stamp();
			gor_run(e, rows[r].kind, rows[r].size, depths[q], n, posted_at, took);
			uint64_t dt = now_ns() - t0, ds = stamp() - s0;
			double scale = ds > 0 ? (double)dt / (double)ds : 1.0;
			qsort(took, n, sizeof(took[0]), cmp_u64);
			printf("BenchmarkGoroutines/C/%s/QD=%" PRIu64 "\t%8" PRIu64
			       "\t%12.0f ns/op\t%10.0f p50-ns\t%10.0f p99-ns\t%10.0f p999-ns\n",
			       rows[r].name, depths[q], n, (double)dt / (double)n,
			       (double)took[nearest_rank(n, 500)] * scale,
			       (double)took[nearest_rank(n, 990)] * scale,
			       (double)took[nearest_rank(n, 999)] * scale);
			fflush(stdout);
		}
	}
	free(posted_at);
	free(took);
}

struct server {
	struct rpma_ep *ep;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn *conn;
};

static void *accept_one(void *arg)
{
	struct server *s = arg;
	struct rpma_conn_req *req = NULL;
	CHECK(rpma_ep_next_conn_req(s->ep, s->cfg, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &s->conn));
	return NULL;
}

static void expect_established(struct rpma_conn *c)
{
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(c, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "rpma_bw: unexpected event: %s\n", rpma_utils_conn_event_2str(ev));
		exit(1);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: rpma_bw [-b BYTES] [-m MIN] [-M MAX] [-s bw|lat|all|goroutines] "
			"[-t SECONDS] [-p PORT] IP\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned timeout = 300;
	const char *port = "7205", *which = "all";
	int opt;
	while ((opt = getopt(argc, argv, "b:m:M:s:t:p:")) != -1) {
		switch (opt) {
		case 'b':
			budget = strtoull(optarg, NULL, 10);
			break;
		case 'm':
			min_iters = strtoull(optarg, NULL, 10);
			break;
		case 'M':
			max_iters = strtoull(optarg, NULL, 10);
			break;
		case 's':
			which = optarg;
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
	int do_bw = !strcmp(which, "all") || !strcmp(which, "bw");
	int do_lat = !strcmp(which, "all") || !strcmp(which, "lat");
	int do_gor = !strcmp(which, "goroutines");
	if (optind != argc - 1 || min_iters == 0 || max_iters < min_iters ||
	    (!do_bw && !do_lat && !do_gor))
		usage();
	const char *ip = argv[optind];
	alarm(timeout); /* SIGALRM ends a run that hangs */

	CHECK(rpma_log_set_function(log_fn));
	struct ibv_context *dev = NULL;
	CHECK(rpma_utils_get_ibv_context(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
	struct rpma_peer *peer = NULL;
	CHECK(rpma_peer_new(dev, &peer));
	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_sq_size(cfg, do_gor ? GOR_SQ : MAX_QD));
	CHECK(rpma_conn_cfg_set_cq_size(cfg, do_gor ? GOR_QD : MAX_QD));

	struct server srv = {.cfg = cfg};
	CHECK(rpma_ep_listen(peer, ip, port, &srv.ep));
	pthread_t th;
	if (pthread_create(&th, NULL, accept_one, &srv) != 0) {
		perror("rpma_bw: pthread_create");
		return 1;
	}
	struct env e = {0};
	struct rpma_conn_req *req = NULL;
	CHECK(rpma_conn_req_new(peer, ip, port, cfg, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &e.client));
	pthread_join(th, NULL);
	e.server = srv.conn;
	expect_established(e.client);
	expect_established(e.server);
	CHECK(rpma_conn_get_cq(e.client, &e.cq));

	void *mem = mmap(NULL, 2 * (size_t)REGION, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("rpma_bw: mmap");
		return 1;
	}
	CHECK(rpma_mr_reg(peer, mem, REGION, USAGE, &e.src));
	CHECK(rpma_mr_reg(peer, (char *)mem + REGION, REGION,
			  do_gor ? USAGE | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT : USAGE, &e.dst));
	size_t desc_size = 0;
	CHECK(rpma_mr_get_descriptor_size(e.dst, &desc_size));
	char desc[64];
	if (desc_size > sizeof(desc)) {
		fprintf(stderr, "rpma_bw: descriptor of %zu bytes\n", desc_size);
		return 1;
	}
	CHECK(rpma_mr_get_descriptor(e.dst, desc));
	CHECK(rpma_mr_remote_from_descriptor(desc, desc_size, &e.rdst));

	struct utsname u;
	uname(&u);
	printf("# rpma_bw: kernel %s, byte budget %" PRIu64 " per sub-benchmark, %" PRIu64
	       " to %" PRIu64 " requests\n",
	       u.release, budget, min_iters, max_iters);
	if (do_bw)
		bench_bandwidth(&e);
	if (do_lat)
		bench_latency(&e);
	if (do_gor) {
		/* As the Go benchmark: the peer writes directly to PMem. */
		struct rpma_peer_cfg *pcfg = NULL;
		CHECK(rpma_peer_cfg_new(&pcfg));
		CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
		CHECK(rpma_conn_apply_remote_peer_cfg(e.client, pcfg));
		CHECK(rpma_peer_cfg_delete(&pcfg));
		bench_goroutines(&e);
	}

	/* The server answers the client's disconnect (see rpma_lat.c). */
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
	munmap(mem, 2 * (size_t)REGION);
	CHECK(rpma_ep_shutdown(&srv.ep));
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_peer_delete(&peer));
	return 0;
}
