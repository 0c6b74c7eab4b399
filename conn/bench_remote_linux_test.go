//go:build linux && cgo

package conn_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// Two-node benchmarks (scripts/bench-2node.sh): with RPMA_BENCH_SERVER
// set to IP:PORT, BenchmarkOps and BenchmarkOpsStamped run their client here
// against a server process on another node (rpma_lat -s,
// internal/bench/testdata/rpma_lat.c), whose completions come from the
// wire rather than from rxe's loopback. The server sends the descriptor of
// its region in the connection's private data and serves nothing else, so
// SendRecv64 (which needs a receive posted on the server) must be left out
// by the -bench pattern. RPMA_BENCH_REAP=0 turns the posts' reaping off
// (core.Tuning.NoReap, benchTuning), so that one binary measures both.
const (
	envBenchServer = "RPMA_BENCH_SERVER"
	envBenchReap   = "RPMA_BENCH_REAP"
)

// newOpsEnv is BenchmarkOps' environment: the remote one when
// RPMA_BENCH_SERVER names a server, else newBenchEnv's loopback pair.
func newOpsEnv(tb testing.TB) *benchEnv {
	tb.Helper()
	if addr := os.Getenv(envBenchServer); addr != "" {
		return newRemoteBenchEnv(tb, addr)
	}
	return newBenchEnv(tb)
}

// newRemoteBenchEnv connects to the server at addr (IP:PORT) from this
// node's device: the client side only (server and dst stay nil), with the
// same source layout as newBenchEnv and the server's region as rdst. At
// cleanup it prints what the client's posts reaped (reap: ...).
func newRemoteBenchEnv(tb testing.TB, addr string) *benchEnv {
	tb.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(tb, err, envBenchServer)
	ip := rdmatest.IP(tb)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(tb, err)
	p := newBenchPeer(tb, dev, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := conn.NewRequest(ctx, p, host, port, nil)
	require.NoError(tb, err)
	client, err := req.Connect(nil)
	require.NoError(tb, err)
	ev, err := client.NextEvent(ctx)
	require.NoError(tb, err)
	require.Equal(tb, rpma.ConnEstablished, ev)
	rdst, err := mr.RemoteFromDescriptor(client.PrivateData())
	require.NoError(tb, err, "the server's descriptor (private data)")
	mem, err := pmem.Alloc(1 << 15)
	require.NoError(tb, err)
	src, err := mr.Reg(p, mem.Bytes(), benchUsage)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		posts, reaps, hits := core.ReapStats((*core.CQ)(client.CQ()))
		// On stdout: a parent benchmark's log is not printed.
		fmt.Printf("reap: %d posts, %d reaped, %d found a completion (%s, reaping on: %v)\n",
			posts, reaps, hits, tb.Name(), os.Getenv(envBenchReap) != "0")
		// Disconnect first and wait for the end (the server answers with
		// its own disconnect), as librpma's examples do.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(tb, client.Disconnect())
		ev, err := client.NextEvent(ctx)
		require.NoError(tb, err)
		require.Equal(tb, rpma.ConnClosed, ev)
		require.NoError(tb, client.Close())
		require.NoError(tb, src.Dereg())
		require.NoError(tb, mem.Close())
		require.NoError(tb, p.Close())
		require.NoError(tb, dev.Close())
	})
	return &benchEnv{client: client, src: src, rdst: rdst, wcs: make([]cq.WC, 8)}
}
