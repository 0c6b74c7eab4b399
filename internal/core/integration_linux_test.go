//go:build linux && cgo

package core

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"net"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/regmem"
	"github.com/gorpma/rpma/internal/tsc"
	"github.com/gorpma/rpma/rpma"
)

// The core tests that need RDMA: what the public packages' tests cannot
// reach (the registry of regions, the verbs objects behind a connection).

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// testPeer returns a peer on the test address's device.
func testPeer(t *testing.T) (*Peer, string) {
	t.Helper()
	ip := rdmatest.IP(t)
	dev, err := DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(t, err)
	p, err := NewPeer(dev)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close())
		require.NoError(t, dev.Close())
	})
	return p, ip
}

// testPair connects two connections of p through an endpoint, with prm
// for both (nil: defaults), closed when the test ends.
func testPair(t *testing.T, p *Peer, ip string, prm *ConnParams) (client, server *Conn) {
	t.Helper()
	ctx := testCtx(t)
	e, err := Listen(p, ip, "0", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	type res struct {
		c   *Conn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		r, err := e.NextConnReq(ctx, prm)
		if err != nil {
			srv <- res{err: err}
			return
		}
		c, err := r.Connect(nil)
		srv <- res{c, err}
	}()
	req, err := NewConnReq(ctx, p, ip, e.Port(), prm)
	require.NoError(t, err)
	client, err = req.Connect(nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close()) })
	r := <-srv
	require.NoError(t, r.err)
	server = r.c
	t.Cleanup(func() { require.NoError(t, server.Close()) })
	for _, c := range []*Conn{client, server} {
		ev, err := c.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev)
	}
	return client, server
}

// mmapped returns n bytes of anonymous shared memory, unmapped when the
// test ends.
func mmapped(t *testing.T, n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

// waitOne waits for and polls one completion of q.
func waitOne(t *testing.T, q *CQ) WC {
	t.Helper()
	ctx := testCtx(t)
	var wc [1]WC
	for {
		n, err := q.GetWC(wc[:])
		if n == 1 {
			return wc[0]
		}
		require.ErrorIs(t, err, rpma.ErrNoCompletion)
		require.NoError(t, q.Wait(ctx))
	}
}

// registerAndDrop registers a Go-heap buffer for remote writes and returns
// only its descriptor: the caller keeps no reference to the buffer or to
// the region, as a program that forgets to deregister.
//
//go:noinline
func registerAndDrop(t *testing.T, p *Peer, n int) [DescriptorSize]byte {
	m, err := RegMR(p, make([]byte, n), UsageWriteDst)
	require.NoError(t, err)
	return m.Descriptor()
}

// TestIntegrationHeapMemoryKeptUntilDereg: Go-heap memory registered and
// dropped without Dereg must never come back to the Go heap while a peer
// can write into it. The region is dropped, the GC runs, 64 MiB of 8 KiB
// buffers are allocated (the sizes that reused the freed memory when the
// review reproduced this), and then the other side writes through the old
// descriptor: no live buffer may receive the bytes.
func TestIntegrationHeapMemoryKeptUntilDereg(t *testing.T) {
	p, ip := testPeer(t)
	client, server := testPair(t, p, ip, nil)
	const size = 64 << 10
	desc := registerAndDrop(t, p, size)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	live := make([][]byte, 0, 8192)
	for i := 0; i < 8192; i++ {
		live = append(live, make([]byte, 8<<10))
	}

	src := mmapped(t, size)
	marker := []byte("gorpma: bytes a peer wrote into a dropped region!")
	for off := 0; off+len(marker) <= size; off += len(marker) {
		copy(src[off:], marker)
	}
	lm, err := RegMR(p, src, UsageWriteSrc)
	require.NoError(t, err)
	defer func() { require.NoError(t, lm.Close()) }()
	rm, err := RemoteFromDescriptor(desc[:])
	require.NoError(t, err)
	require.NoError(t, server.Write(rm, 0, lm, 0, size, rpma.CompletionAlways, 1))
	wc := waitOne(t, server.CQ())
	require.NoError(t, wc.Err(), "the write lands in the kept region")

	hits := 0
	for _, b := range live {
		if bytes.Contains(b, marker[:16]) {
			hits++
		}
	}
	require.Zero(t, hits, "live Go buffers received the peer's bytes")
	runtime.KeepAlive(live)

	// The registry kept the region: find it and deregister it.
	var dropped *MR
	regmem.Each(func(key any, _ []byte) {
		if m, ok := key.(*MR); ok && m.rkey == rm.rkey {
			dropped = m
		}
	})
	require.NotNil(t, dropped, "the dropped region is still registered")
	require.True(t, bytes.Contains(dropped.buf, marker), "the write landed in the dropped region's own memory")
	require.NoError(t, dropped.Close())
	_ = client
}

// logCapture collects what the library logs at every level while the
// test runs.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func captureLogs(t *testing.T) *logCapture {
	lc := &logCapture{}
	prev, _ := rpma.LogThresholdOf(rpma.LogThresholdPrimary)
	require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogDebug))
	rpma.SetLogFunction(func(level rpma.LogLevel, file string, line int, fn string, msg string) {
		lc.mu.Lock()
		lc.lines = append(lc.lines, msg)
		lc.mu.Unlock()
	})
	t.Cleanup(func() {
		rpma.SetLogFunction(nil)
		rpma.SetLogThreshold(rpma.LogThresholdPrimary, prev)
	})
	return lc
}

// waitFor waits until a logged line contains s.
func (lc *logCapture) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		lc.mu.Lock()
		for _, l := range lc.lines {
			if strings.Contains(l, s) {
				lc.mu.Unlock()
				return
			}
		}
		lc.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	t.Fatalf("nothing logged %q within 20 s; logged:\n%s", s, strings.Join(lc.lines, "\n"))
}

// TestIntegrationCQOverrunBreaksConnection: work requests posted past the
// library's accounting (straight to the QP) overrun the CQ; rxe raises
// IBV_EVENT_CQ_ERR, and the library breaks the connection with an error
// naming it: posts fail, NextEvent says LOST, and once the CQ is drained
// its wait ends with a ConnEventError whose cause is the event.
func TestIntegrationCQOverrunBreaksConnection(t *testing.T) {
	p, ip := testPeer(t)
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 64, 1
	client, _ := testPair(t, p, ip, &prm)
	size := client.CQ().Size()
	for i := 0; i < size+8; i++ {
		errno, _ := client.q.qp.PostSend(0, ibv.OpRDMAWrite, ibv.SendSignaled, 0, 0, 0, 0, 0, 0, ibv.Reap{})
		require.Zero(t, errno, "raw post %d", i)
	}
	deadline := time.Now().Add(20 * time.Second)
	for client.Broken() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	err := client.Broken()
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	require.Contains(t, err.Error(), "IBV_EVENT_CQ_ERR")
	ctx := testCtx(t)
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnLost, ev)
	err = client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1)
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	require.Contains(t, err.Error(), "IBV_EVENT_CQ_ERR")

	// Drain until the wait ends: completions that rxe had not yet put on
	// the CQ when the connection broke may arrive while draining (each
	// wakes a wait). The overrun dropped at least one.
	wcs := make([]WC, 64)
	polled := 0
	for {
		n, err := client.CQ().GetWC(wcs)
		if errors.Is(err, rpma.ErrNoCompletion) {
			if err = client.CQ().Wait(ctx); err != nil {
				var cerr *rpma.ConnEventError
				require.ErrorAs(t, err, &cerr)
				require.Equal(t, rpma.ConnLost, cerr.Event)
				require.Contains(t, cerr.Error(), "IBV_EVENT_CQ_ERR")
				t.Logf("CQ of %d entries, %d of %d completions polled after the overrun: %v", size, polled, size+8, err)
				break
			}
			continue
		}
		require.NoError(t, err)
		polled += n
	}
	require.Less(t, polled, size+8, "the overrun dropped completions")
}

// TestIntegrationLostWaitReturnsFlushes: when a connection is lost with
// its QP in the error state and requests outstanding, its CQ's waits
// return their flushed completions before the ConnEventError, although
// rxe flushes them after the loss is visible (endflush.go): a caller that
// drains until the wait fails sees every request end. Many requests and
// several rounds, because the race it guards against is one of timing:
// rxe's completer is still flushing while the caller drains.
func TestIntegrationLostWaitReturnsFlushes(t *testing.T) {
	p, ip := testPeer(t)
	const rounds, n = 6, 256
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = n, n
	cause := errors.New("lost by the test")
	for r := 0; r < rounds; r++ {
		client, server := testPair(t, p, ip, &prm)
		silence(t, server)
		for i := 0; i < n; i++ {
			require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(i)))
		}
		client.lose(cause)
		ctx := testCtx(t)
		wcs := make([]WC, 16)
		var ended []uint64
		var err error
		waits := 0
		for {
			k, perr := client.CQ().GetWC(wcs)
			for _, wc := range wcs[:k] {
				require.ErrorIs(t, wc.Err(), rpma.ErrWRFlushed)
				ended = append(ended, wc.OpContext)
			}
			if k > 0 {
				continue
			}
			require.ErrorIs(t, perr, rpma.ErrNoCompletion)
			waits++
			if err = client.CQ().Wait(ctx); err != nil {
				break
			}
		}
		t.Logf("round %d: %d completions, %d waits, then %v", r, len(ended), waits, err)
		var cerr *rpma.ConnEventError
		require.ErrorAs(t, err, &cerr, "round %d", r)
		require.Equal(t, rpma.ConnLost, cerr.Event)
		require.ErrorIs(t, err, cause)
		require.Len(t, ended, n, "round %d: every outstanding write ends before the wait's error", r)
		for i, ctx := range ended {
			require.Equal(t, uint64(i), ctx, "round %d: in order", r)
		}
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
	}
}

// netdevOf returns the network interface that has address ip.
func netdevOf(t *testing.T, ip string) string {
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.String() == ip {
				return ifc.Name
			}
		}
	}
	t.Fatalf("no interface has %s", ip)
	return ""
}

// TestIntegrationLinkDownAndUp: the port going down and up again raises
// PORT_ERR and PORT_ACTIVE, which the library reads (and logs) without
// breaking the connection: it still works afterwards.
func TestIntegrationLinkDownAndUp(t *testing.T) {
	lc := captureLogs(t)
	p, ip := testPeer(t)
	client, _ := testPair(t, p, ip, nil)
	dev := netdevOf(t, ip)
	link := func(state string) {
		out, err := exec.Command("ip", "link", "set", dev, state).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	link("down")
	lc.waitFor(t, "IBV_EVENT_PORT_ERR")
	link("up")
	lc.waitFor(t, "IBV_EVENT_PORT_ACTIVE")
	require.NoError(t, client.Broken())
	require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 7))
	wc := waitOne(t, client.CQ())
	require.NoError(t, wc.Err())
	require.Equal(t, uint64(7), wc.OpContext)
}

// stalledPair connects two connections whose server posts no receive:
// the client's sends meet receiver-not-ready and retry for ever (an RNR
// retry count of 7), so everything the client posts after one waits in
// its send queue, and the provider's queue can be filled for certain.
// The server can take n receives (its RQSize and CQ).
func stalledPair(t *testing.T, p *Peer, ip string, n int) (client, server *Conn) {
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 64, 64
	prm.RQSize, prm.RCQSize = n, n
	return testPair(t, p, ip, &prm)
}

// stall posts zero-byte unsignaled sends straight to the client's QP,
// past the library's accounting, until the provider refuses one (or max
// are posted); it returns how many it posted.
func stall(t *testing.T, c *Conn, max int) int {
	for k := 0; k < max; k++ {
		if errno, _ := c.q.qp.PostSend(0, ibv.OpSend, 0, 0, 0, 0, 0, 0, 0, ibv.Reap{}); errno != 0 {
			require.Equal(t, syscall.ENOMEM, errno, "ibv_post_send on a full queue")
			return k
		}
	}
	return max
}

// unstall lets k stalled sends through (the server posts k receives),
// then waits until the client's queue has drained: a signaled zero-byte
// write completes after everything before it. It drains the server's
// receive CQ.
func unstall(t *testing.T, client, server *Conn, k int) {
	for i := 0; i < k; i++ {
		require.NoError(t, server.Recv(nil, 0, 0, uint64(i)))
	}
	ctx := testCtx(t)
	for {
		err := client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 3)
		if err == nil {
			break
		}
		require.ErrorIs(t, err, rpma.ErrQueueFull)
		require.NoError(t, ctx.Err(), "the send queue never drained")
		time.Sleep(time.Millisecond)
	}
	wc := waitOne(t, client.CQ())
	require.NoError(t, wc.Err())
	for got := 0; got < k; got++ {
		wc := waitOne(t, server.RCQ())
		require.NoError(t, wc.Err())
	}
}

// TestIntegrationProviderQueueFull: when the provider's send queue is
// full although the library's accounting has room (filled past it here),
// the provider's errno becomes rpma.ErrQueueFull on both post paths:
// ENOMEM from ibv_post_send (writes, the emulated atomic write) and
// ENOSPC from the extended API's ibv_wr_complete (the native atomic
// write, Linux 6.2+), with nothing posted and the connection intact.
func TestIntegrationProviderQueueFull(t *testing.T) {
	p, ip := testPeer(t)
	client, server := stalledPair(t, p, ip, 1024)
	dst := mmapped(t, 4096)
	rm, err := RegMR(p, dst, UsageWriteDst)
	require.NoError(t, err)
	defer func() { require.NoError(t, rm.Close()) }()
	d := rm.Descriptor()
	remote, err := RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	paths := []struct {
		name string
		post func() error
	}{
		{"Write (ibv_post_send)", func() error { return client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1) }},
		{"AtomicWrite", func() error { return client.AtomicWrite(remote, 0, [8]byte{1}, rpma.CompletionAlways, 2) }},
	}
	t.Logf("native atomic write (the extended API's path): %v", client.NativeAtomicWrite())
	for _, path := range paths {
		k := stall(t, client, 1000)
		require.Less(t, k, 1000, "the provider never refused")
		before := client.q.sq.outstanding()
		err := path.post()
		require.ErrorIs(t, err, rpma.ErrQueueFull, "%s on a full provider queue", path.name)
		require.Equal(t, before, client.q.sq.outstanding(), "%s: nothing kept", path.name)
		require.NoError(t, client.Broken(), "a full queue does not break the connection")
		t.Logf("%s: the provider's queue took %d, then %v", path.name, k, err)
		unstall(t, client, server, k)
	}
	require.Equal(t, make([]byte, 8), dst[:8], "the refused atomic write wrote nothing")
}

// TestIntegrationChainPartlyPosted: when the provider accepts a
// WriteAndFlush chain's write and refuses its flush (one slot left), the
// write is on the wire (its doorbell rung): the library keeps its slot
// and rolls back only the flush, and the written bytes arrive.
func TestIntegrationChainPartlyPosted(t *testing.T) {
	p, ip := testPeer(t)
	client, server := stalledPair(t, p, ip, 1024)
	if client.NativeFlush() {
		t.Log("native flush: the extended API posts a chain all or nothing")
	}
	src, dst := mmapped(t, 4096), mmapped(t, 4096)
	lm, err := RegMR(p, src, UsageWriteSrc)
	require.NoError(t, err)
	defer func() { require.NoError(t, lm.Close()) }()
	rmr, err := RegMR(p, dst, UsageWriteDst|UsageFlushVisibility)
	require.NoError(t, err)
	defer func() { require.NoError(t, rmr.Close()) }()
	d := rmr.Descriptor()
	rm, err := RemoteFromDescriptor(d[:])
	require.NoError(t, err)

	depth := stall(t, client, 1000)
	unstall(t, client, server, depth)
	require.Equal(t, depth-1, stall(t, client, depth-1), "one slot left")
	marker := []byte("the write of a half-posted chain")
	copy(src, marker)
	before := client.q.sq.outstanding()
	err = client.WriteAndFlush(rm, 0, lm, 0, len(marker), rpma.FlushVisibility, rpma.CompletionAlways, 4)
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	if client.NativeFlush() {
		require.Equal(t, before, client.q.sq.outstanding(), "all or nothing")
		unstall(t, client, server, depth-1)
		return
	}
	require.Equal(t, before+1, client.q.sq.outstanding(), "the posted write keeps its slot, the flush's is rolled back")
	unstall(t, client, server, depth-1)
	require.Equal(t, marker, dst[:len(marker)], "the accepted write reached the other side")
	require.NoError(t, client.Broken())
}

// TestIntegrationResizeWhilePosting: CQ.Resize and posts race: a resize
// is atomic with respect to posts, so it either succeeds or refuses (the
// CQ holds more than the new size) and the CQ never overruns (rxe would
// raise IBV_EVENT_CQ_ERR and the connection would break).
func TestIntegrationResizeWhilePosting(t *testing.T) {
	p, ip := testPeer(t)
	prm := DefaultConnParams()
	prm.SQSize, prm.CQSize = 64, 64
	client, _ := testPair(t, p, ip, &prm)
	q := client.CQ()
	stop := make(chan struct{})
	posted := make(chan error, 1)
	go func() {
		// Bursts of posts, then a full drain: the outstanding count
		// sweeps from 0 to the CQ's size and back.
		rng := rand.New(rand.NewSource(4))
		wcs := make([]WC, 16)
		for {
			for burst := rng.Intn(64); burst > 0; burst-- {
				select {
				case <-stop:
					posted <- nil
					return
				default:
				}
				err := client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1)
				if errors.Is(err, rpma.ErrQueueFull) {
					break
				}
				if err != nil {
					posted <- err
					return
				}
			}
			for client.q.sq.outstanding() > 0 {
				if _, err := q.GetWC(wcs); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
					posted <- err
					return
				}
			}
		}
	}()
	rng := rand.New(rand.NewSource(3))
	ok, refused := 0, 0
	for i := 0; i < 300; i++ {
		err := q.Resize(2 + rng.Intn(62))
		switch {
		case err == nil:
			ok++
		case errors.Is(err, rpma.ErrInvalidArgument) && errors.Is(err, syscall.EINVAL):
			refused++
		default:
			close(stop)
			t.Fatalf("resize %d: %v", i, err)
		}
		require.NoError(t, client.Broken(), "resize %d: the CQ overran", i)
	}
	close(stop)
	require.NoError(t, <-posted)
	t.Logf("300 resizes under posts: %d done, %d refused", ok, refused)
	require.Positive(t, ok)
	require.NoError(t, client.Broken())
}

// silence makes c's side of a connection vanish without a word: its QP
// goes to the error state, where rxe drops what arrives without answering
// (no ACK, no NAK), as a host that lost power would. The other side's
// requests then retry (for ever, with a retry count of 7 on rxe).
func silence(t *testing.T, c *Conn) {
	require.NoError(t, c.q.qp.ToError())
}

// requireLost checks that c was reported lost for its peer timeout: posts,
// waits and NextEvent all say so.
func requireLost(t *testing.T, c *Conn) {
	t.Helper()
	err := c.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 99)
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	require.ErrorIs(t, err, rpma.ErrPeerTimeout)
	ev, err := c.NextEvent(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, rpma.ConnLost, ev)
}

// TestIntegrationPeerTimeoutBusy: with requests outstanding to a silent
// peer, a connection with PeerTimeout D reports itself lost no sooner
// than D after the last completion and within 1.25 × D of the write it
// waits for (plus TCG's scheduling): the blocked wait ends with LOST
// caused by ErrPeerTimeout, the outstanding write completes with a flush
// error, posts fail. Without a PeerTimeout the same connection would
// wait for ever (rxe retries for ever).
//
// D is counted from the last completion, not from the unanswered write:
// the liveness tick that last saw progress may come between the two,
// and CI once saw the loss 1.9976 s after the write for a D of 2 s.
func TestIntegrationPeerTimeoutBusy(t *testing.T) {
	const d = 2 * time.Second
	p, ip := testPeer(t)
	prm := DefaultConnParams()
	prm.PeerTimeout = d
	client, server := testPair(t, p, ip, &prm)
	// Alive: a stream of writes for 2 × D is never declared dead.
	start := time.Now()
	var lastPost time.Time // before the post whose completion is the last
	for i := 0; time.Since(start) < 2*d; i++ {
		lastPost = time.Now()
		require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(i)))
		wc := waitOne(t, client.CQ())
		require.NoError(t, wc.Err())
	}
	require.NoError(t, client.Broken(), "an answering peer is not dead")

	silence(t, server)
	sent := time.Now()
	require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 7))
	ctx := testCtx(t)
	var wc WC
	var wcs [1]WC
	var werr error
	for {
		n, err := client.CQ().GetWC(wcs[:])
		if n == 1 {
			wc = wcs[0]
			break
		}
		require.ErrorIs(t, err, rpma.ErrNoCompletion)
		if werr = client.CQ().Wait(ctx); werr != nil {
			break
		}
	}
	took, sinceLast := time.Since(sent), time.Since(lastPost)
	t.Logf("lost %v after the write, %v after the last completing post (PeerTimeout %v): wait %v, completion %v",
		took, sinceLast, d, werr, wc.Err())
	if werr != nil {
		var cerr *rpma.ConnEventError
		require.ErrorAs(t, werr, &cerr)
		require.Equal(t, rpma.ConnLost, cerr.Event)
		require.ErrorIs(t, werr, rpma.ErrPeerTimeout)
		wc = waitOne(t, client.CQ()) // the flushed write
	}
	require.Equal(t, uint64(7), wc.OpContext)
	require.ErrorIs(t, wc.Err(), rpma.ErrWRFlushed)
	require.GreaterOrEqual(t, sinceLast, d, "not before D after the last completion")
	require.Less(t, took, d*5/4+3*time.Second, "within 1.25 × D and a margin for TCG")
	requireLost(t, client)
}

// TestIntegrationPeerTimeoutIdle: an idle connection with PeerTimeout D
// is probed; alive, it stays up (the probes never reach the caller's
// CQ); once the peer is silent, on either side, it is reported lost
// within 1.5 × D.
func TestIntegrationPeerTimeoutIdle(t *testing.T) {
	const d = 2 * time.Second
	for _, side := range []string{"client", "server"} {
		t.Run(side, func(t *testing.T) {
			p, ip := testPeer(t)
			prm := DefaultConnParams()
			prm.PeerTimeout = d
			client, server := testPair(t, p, ip, &prm)
			watcher, victim := client, server
			if side == "server" {
				watcher, victim = server, client
			}
			time.Sleep(3 * d) // idle and answered: probes come and go
			require.NoError(t, watcher.Broken())
			var wcs [4]WC
			_, err := watcher.CQ().GetWC(wcs[:])
			require.ErrorIs(t, err, rpma.ErrNoCompletion, "the probes' completions are the library's")

			silence(t, victim)
			sent := time.Now()
			ctx := testCtx(t)
			// Waits wake when a probe completes (spuriously: nothing of
			// the caller's to poll), until the connection is lost.
			for err = watcher.CQ().Wait(ctx); err == nil; err = watcher.CQ().Wait(ctx) {
				_, perr := watcher.CQ().GetWC(wcs[:])
				require.ErrorIs(t, perr, rpma.ErrNoCompletion)
			}
			took := time.Since(sent)
			t.Logf("idle %s: lost after %v (PeerTimeout %v): %v", side, took, d, err)
			require.ErrorIs(t, err, rpma.ErrPeerTimeout)
			require.Less(t, took, d*3/2+3*time.Second, "within 1.5 × D and a margin for TCG")
			requireLost(t, watcher)
			_, err = watcher.CQ().GetWC(wcs[:])
			require.ErrorIs(t, err, rpma.ErrNoCompletion, "the probe's flushed completion is the library's too")
		})
	}
}

// TestIntegrationNoPeerTimeoutWaitsForEver is the control of the two
// above: without a PeerTimeout (librpma's behaviour), a write to a silent
// peer neither completes nor fails within 3 × 2 s, and the connection is
// not broken: rxe retries for ever.
func TestIntegrationNoPeerTimeoutWaitsForEver(t *testing.T) {
	p, ip := testPeer(t)
	client, server := testPair(t, p, ip, nil)
	silence(t, server)
	require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 7))
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	var wcs [1]WC
	for {
		_, err := client.CQ().GetWC(wcs[:])
		require.ErrorIs(t, err, rpma.ErrNoCompletion, "no completion comes")
		if err := client.CQ().Wait(ctx); err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			break
		}
	}
	require.NoError(t, client.Broken())
}

// retryExceededAfter posts a zero-length write on from to a silenced
// peer and returns how long it took to fail with IBV_WC_RETRY_EXC_ERR.
func retryExceededAfter(t *testing.T, from, to *Conn) time.Duration {
	t.Helper()
	silence(t, to)
	start := time.Now()
	require.NoError(t, from.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 5))
	wc := waitOne(t, from.CQ())
	took := time.Since(start)
	require.ErrorIs(t, wc.Err(), &rpma.WCError{Status: rpma.WCRetryExcErr}, "after %v", took)
	return took
}

// TestIntegrationAckTimeout: AckTimeout sets the local ACK timeout of
// each side's QP, the accepting side's too: with RetryCount 2 and an
// AckTimeout of 67 ms (exponent 14), a write to a silent peer fails after
// about 3 × 67 ms; the control, rdma_cm's own timeout (0.54 s on 6.12,
// 2.2 s on 6.1), takes at least 1.2 s for the same three tries.
func TestIntegrationAckTimeout(t *testing.T) {
	const short = 67 * time.Millisecond
	p, ip := testPeer(t)
	for _, tc := range []struct {
		name   string
		ack    time.Duration
		accept bool // the accepting side writes, the connecting one is silenced
	}{
		{"connecting side", short, false},
		{"accepting side", short, true},
		{"control: rdma_cm's timeout", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prm := DefaultConnParams()
			prm.RetryCount = 2 // the connecting side's count rules both QPs
			prm.AckTimeout = tc.ack
			client, server := testPair(t, p, ip, &prm)
			from, to := client, server
			if tc.accept {
				from, to = server, client
			}
			took := retryExceededAfter(t, from, to)
			t.Logf("retry exceeded after %v (AckTimeout %v, RetryCount 2)", took, tc.ack)
			if tc.ack > 0 {
				require.Less(t, took, time.Second, "three tries of %v each", tc.ack)
			} else {
				require.GreaterOrEqual(t, took, 1200*time.Millisecond, "three tries of rdma_cm's timeout")
			}
		})
	}
}

// TestIntegrationBusyPollYields: a goroutine that busy-polls (posts and
// polls until its completion is there, or polls an empty CQ) yields once per
// yieldPeriod (yieldCounts of the counter): never more often, and in at least a tenth
// of the periods it ran through (a yield itself may wait for a thread for
// longer than a period on a loaded host: make test's vm-6.12 tier saw 17
// of 40 while posting, 36 polling); with yielding off (the negative
// control) it never does.
func TestIntegrationBusyPollYields(t *testing.T) {
	p, ip := testPeer(t)
	client, _ := testPair(t, p, ip, nil)
	var yields int
	yield := gosched
	gosched = func() { yields++ }
	defer func() { gosched = yield }()
	const periods = 40
	var wcs [1]WC
	// busy says how many yields it saw, and how many whole periods
	// passed from its start to its end: the operation in flight when the
	// time is up may end a period later when the host deschedules the
	// vCPU, so the periods are counted to the loop's actual end.
	busy := func(posting bool) (int, int) {
		yields = 0
		yieldCounts := yieldCounts.Load()
		start := tsc.Read()
		client.dl.lastYield = start
		for end := start + periods*yieldCounts; tsc.Read() < end; {
			if posting {
				require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1))
				for {
					n, err := client.CQ().GetWC(wcs[:])
					if n == 1 {
						require.NoError(t, wcs[0].Err())
						break
					}
					require.ErrorIs(t, err, rpma.ErrNoCompletion)
				}
				continue
			}
			_, err := client.CQ().GetWC(wcs[:])
			require.ErrorIs(t, err, rpma.ErrNoCompletion)
		}
		return yields, int((tsc.Read() - start) / yieldCounts)
	}
	for _, posting := range []bool{true, false} {
		n, passed := busy(posting)
		t.Logf("posting %v: %d yields in %d periods", posting, n, passed)
		require.LessOrEqual(t, n, passed, "at most one yield per period")
		require.GreaterOrEqual(t, n, periods/10, "yields period after period")
	}
	client.dl.mu.Lock()
	client.dl.tune.NoYield = true // as Peer.SetTuning would have made it
	client.dl.mu.Unlock()
	for _, posting := range []bool{true, false} {
		n, _ := busy(posting)
		require.Zero(t, n, "yielding off: no yield")
	}
}
