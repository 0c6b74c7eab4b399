//go:build linux && cgo

package conn_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// scaleConns are the connection counts of BenchmarkScale.
var scaleConns = []int{1, 16, 64, 256}

// scaleSetupLimit bounds the set-up (and the teardown) of one
// sub-benchmark's connections: under TCG a connection takes a few tens of
// ms to set up, so 256 of them take seconds, not minutes.
const scaleSetupLimit = 3 * time.Minute

// BenchmarkScale: N connections (1, 16, 64, 256) between one server peer
// with one listening endpoint and one client peer (two peers on the same
// rxe device, in one process), each connection with its own CQs (the
// default Config: librpma 1.2.0 has no CQ shared between connections, and
// neither has this library; a connection's receive CQ and main CQ can
// share a completion channel, which is irrelevant to busy polling). The
// measured loop keeps one 64-byte signaled RDMA write outstanding on each
// client connection (queue depth 1 per connection, N in all): a single
// goroutine sweeps the connections' CQs with non-blocking GetWC and, for
// each completion, posts the connection's next write. One b.Loop iteration
// is one completed write, so ns/op is the inverse of the aggregate rate,
// also reported as ops/s.
//
// Why one goroutine: it is what C librpma's user would write (and what
// internal/bench/testdata/rpma_scale.c does), so the comparison measures
// the libraries, not the scheduler; and in a 2-vCPU VM rxe's own work
// (the requester and responder run in the posting thread on 6.1, in a
// kworker on 6.12) needs the other CPU: more pollers would compete with
// it.
//
// Memory: B/conn is the growth of the process's resident set (VmRSS in
// /proc/self/status) from before the first connection request to after
// the last connection is established, divided by N. It is per connection
// with both of its ends, as both live in this process: two QPs, two CQs,
// two completion channels, two rdma_cm ids and event channels, the
// library's Go objects and the provider's (libibverbs, librdmacm, rxe)
// malloc'ed state. The QP and CQ rings are mmapped by the rxe provider
// from the kernel and only counted once touched, so RSS, not the Go heap,
// is the honest figure; heap-B/conn is the Go heap's share (live objects
// after a GC). The kernel's own memory for the QPs is not counted. Run
// each N in a fresh process (scripts/bench-scale.sh does): in one
// process, a later N reuses memory the earlier ones freed (the Go heap and
// malloc keep it), which shrinks its figure. setup-s is the time it took
// to set the N connections up (requests made one after the other).
func BenchmarkScale(b *testing.B) {
	for _, n := range scaleConns {
		b.Run(fmt.Sprintf("Conns%d", n), func(b *testing.B) { benchScale(b, n) })
	}
}

// procRSS returns the process's resident set size in bytes.
func procRSS(tb testing.TB) float64 {
	f, err := os.Open("/proc/self/status")
	require.NoError(tb, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			require.NoError(tb, err)
			return kb * 1024
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// openFDs returns how many file descriptors the process has open.
func openFDs(tb testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(tb, err)
	return len(ents)
}

// raiseNoFile lifts the open files limit where it can: each end of a
// connection holds several descriptors (fds/conn reports them), so 256
// connections with both ends in one process need more than the VM's
// default hard limit of 4096. Root can raise the hard limit.
func raiseNoFile(tb testing.TB) {
	const want = 1 << 16
	var lim unix.Rlimit
	require.NoError(tb, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	if lim.Cur >= want {
		return
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: want, Max: max(lim.Max, want)}); err != nil {
		lim.Cur = lim.Max
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim) // the best we can
	}
}

// goHeap returns the bytes of live Go heap objects after a GC.
func goHeap() float64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64())
}

func benchScale(b *testing.B, n int) {
	ip := rdmatest.IP(b)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, dev.Close()) })
	sp := newBenchPeer(b, dev, false)
	b.Cleanup(func() { require.NoError(b, sp.Close()) })
	cp := newBenchPeer(b, dev, false)
	b.Cleanup(func() { require.NoError(b, cp.Close()) })
	e, err := ep.Listen(sp, ip, "0")
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, e.Close()) })

	// The server's region (one for every connection: each writes its own
	// 64 bytes of it) and the client's source.
	mem, err := pmem.Alloc(1 << 15)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, mem.Close()) })
	dst, err := mr.Reg(sp, mem.Bytes()[:1<<14], mr.UsageWriteDst)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, dst.Dereg()) })
	src, err := mr.Reg(cp, mem.Bytes()[1<<14:], mr.UsageWriteSrc)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, src.Dereg()) })
	d := dst.Descriptor()
	rdst, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(b, err)
	slots := (1 << 14) / 64

	raiseNoFile(b)
	rss0, heap0, fds0 := procRSS(b), goHeap(), openFDs(b)
	start := time.Now()
	clients, servers := scaleConnect(b, cp, e, ip, n)
	setup := time.Since(start)
	rss1, heap1, fds1 := procRSS(b), goHeap(), openFDs(b)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), scaleSetupLimit)
		defer cancel()
		// The clients disconnect, each server reads CLOSED and answers
		// with its own disconnect, and each client reads CLOSED: without
		// the answer the clients' CLOSED would wait for the CM's timeout.
		for _, c := range clients {
			require.NoError(b, c.Disconnect())
		}
		for _, cs := range [][]*conn.Conn{servers, clients} {
			for _, c := range cs {
				ev, err := c.NextEvent(ctx)
				require.NoError(b, err)
				require.Equal(b, rpma.ConnClosed, ev)
				if slices.Contains(servers, c) {
					require.NoError(b, c.Disconnect())
				}
			}
		}
		for _, c := range slices.Concat(clients, servers) {
			require.NoError(b, c.Close())
		}
	})

	cqs := make([]*cq.CQ, n)
	for i, c := range clients {
		cqs[i] = c.CQ()
	}
	post := func(i int, seq uint64) {
		off := (i % slots) * 64
		if err := clients[i].Write(rdst, off, src, off, 64, rpma.CompletionAlways, seq); err != nil {
			b.Fatal(err)
		}
	}
	for i := range clients {
		post(i, uint64(i))
	}
	wcs := make([]cq.WC, 1) // QD1: a CQ holds at most one completion
	next, seq := 0, uint64(n)
	for b.Loop() {
		// Sweep from where the last completion was found, until one.
		for {
			got, err := cqs[next].GetWC(wcs)
			if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
				b.Fatal(err)
			}
			if got == 1 {
				if wcs[0].Status != rpma.WCSuccess {
					b.Fatal(wcs[0].Err())
				}
				post(next, seq)
				seq++
				next = (next + 1) % n
				break
			}
			next = (next + 1) % n
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric((rss1-rss0)/float64(n), "B/conn")
	b.ReportMetric((heap1-heap0)/float64(n), "heap-B/conn")
	b.ReportMetric(float64(fds1-fds0)/float64(n), "fds/conn")
	b.ReportMetric(setup.Seconds(), "setup-s")
	// The writes still outstanding complete before the teardown.
	for _, q := range cqs {
		for {
			got, err := q.GetWC(wcs)
			if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
				b.Fatal(err)
			}
			if got == 1 {
				break
			}
		}
	}
}

// scaleConnect sets up n connections from cp to e, one request after the
// other, the server accepting them in a goroutine, and waits for all of
// them to be established, within scaleSetupLimit.
func scaleConnect(b *testing.B, cp *peer.Peer, e *ep.Endpoint, ip string, n int) (clients, servers []*conn.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), scaleSetupLimit)
	defer cancel()
	// On a failure, what was set up is closed (Close is idempotent: after
	// a success, the orderly teardown has closed everything already).
	var accepted []*conn.Conn
	b.Cleanup(func() {
		for _, c := range slices.Concat(clients, accepted) {
			_ = c.Close()
		}
	})
	srv := make(chan result[[]*conn.Conn], 1)
	go func() {
		var cs []*conn.Conn
		for range n {
			req, err := e.NextConnReq(ctx, nil)
			if err != nil {
				srv <- result[[]*conn.Conn]{v: cs, err: err}
				return
			}
			c, err := req.Connect(nil)
			if err != nil {
				srv <- result[[]*conn.Conn]{v: cs, err: err}
				return
			}
			cs = append(cs, c)
		}
		srv <- result[[]*conn.Conn]{v: cs}
	}()
	for range n {
		req, err := conn.NewRequest(ctx, cp, ip, e.Port(), nil)
		var c *conn.Conn
		if err == nil {
			c, err = req.Connect(nil)
		}
		if err != nil {
			cancel() // the server's goroutine ends with what it accepted
			accepted = (<-srv).v
			b.Fatalf("connection %d of %d: %v", len(clients)+1, n, err)
		}
		clients = append(clients, c)
	}
	r := <-srv
	accepted = r.v
	require.NoError(b, r.err)
	servers = r.v
	for _, c := range append(append([]*conn.Conn{}, clients...), servers...) {
		ev, err := c.NextEvent(ctx)
		require.NoError(b, err)
		require.Equal(b, rpma.ConnEstablished, ev)
	}
	return clients, servers
}
