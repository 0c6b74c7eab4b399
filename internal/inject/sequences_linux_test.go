//go:build rpma_inject && linux && cgo

package inject_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

// env is what the sequences share: the test address and the ports of
// the two counterparts.
type env struct {
	ip          string
	servePort   string // a counterpart serves here (client sequences)
	connectPort string // a counterpart connects here (server sequences)

	// What the connections do natively on this build and kernel (seen
	// by the first clean run of a client sequence).
	nativeAtomicWrite, nativeFlush bool
}

// scope collects what a run opened, to close in reverse order at its end.
type scope struct{ closers []closer }

type closer struct {
	name  string
	close func() error
}

func (s *scope) add(name string, f func() error) { s.closers = append(s.closers, closer{name, f}) }

// sequence is one public sequence of calls, as a user makes them.
type sequence struct {
	name string
	run  func(ctx context.Context, e *env, s *scope) error
	// raw: the sequence calls the verbs layer itself, whose errors are
	// its own (the failed call and errno), not rpma's.
	raw bool
}

var sequences = []sequence{
	{"devinfo", seqDevinfo, true},
	{"device", seqDevice, false},
	{"peer", seqPeer, false},
	{"mr", seqMR, false},
	{"srq", seqSRQ, false},
	{"connect-datapath", seqClient, false},
	{"connect-shared-channel", seqClientShared, false},
	{"connect-srq", seqClientSRQ, false},
	{"connect-peer-timeout", seqClientPeerTimeout, false},
	{"listen-accept", seqServer, false},
	{"listen-reject", seqReject, false},
}

// openPeer opens the device of e.ip and a peer on it.
func openPeer(e *env, s *scope) (*peer.Peer, error) {
	dev, err := peer.DeviceForAddress(e.ip, rpma.IbvContextLocal)
	if err != nil {
		return nil, err
	}
	s.add("device", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return nil, err
	}
	s.add("peer", p.Close)
	return p, nil
}

// peerRegion opens a peer (openPeer) and registers 4 KiB with it for
// usage: how most sequences begin.
func peerRegion(e *env, s *scope, usage mr.Usage) (*peer.Peer, *mr.Local, error) {
	p, err := openPeer(e, s)
	if err != nil {
		return nil, nil, err
	}
	m, err := region(p, s, 4096, usage)
	return p, m, err
}

// region registers n bytes of fresh DRAM with p.
func region(p *peer.Peer, s *scope, n int, usage mr.Usage) (*mr.Local, error) {
	mem, err := pmem.Alloc(n)
	if err != nil {
		return nil, err
	}
	s.add("memory", mem.Close)
	m, err := mr.Reg(p, mem.Bytes(), usage)
	if err != nil {
		return nil, err
	}
	s.add("mr", m.Dereg)
	return m, nil
}

func seqDevice(ctx context.Context, e *env, s *scope) error {
	dev, err := peer.DeviceForAddress(e.ip, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	s.add("device", dev.Close)
	_, err = dev.ODPCapable()
	return err
}

func seqPeer(ctx context.Context, e *env, s *scope) error {
	_, err := openPeer(e, s)
	return err
}

func seqMR(ctx context.Context, e *env, s *scope) error {
	_, m, err := peerRegion(e, s, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent)
	if err != nil {
		return err
	}
	// Without On-Demand Paging (rxe) there is nothing to prefetch: the
	// device says so, which is not the failure looked for here.
	if err := m.Advise(0, 4096, mr.AdvicePrefetchWrite, 0); err != nil && !errors.Is(err, rpma.ErrNotSupported) {
		return err
	}
	return nil
}

// seqDevinfo is what examples/devinfo does with the verbs layer itself
// (no public package lists devices or queries ports).
func seqDevinfo(ctx context.Context, e *env, s *scope) error {
	names, err := ibv.DeviceNames()
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return errors.New("no device")
	}
	dev, err := ibv.OpenDevice(names[0])
	if err != nil {
		return err
	}
	s.add("device context", dev.Close)
	if _, err := dev.QueryPort(1); err != nil {
		return err
	}
	_, err = dev.QueryDevice()
	return err
}

// srqWithRecv creates an SRQ on p and posts one receive into m at off.
func srqWithRecv(p *peer.Peer, s *scope, m *mr.Local, off int) (*srq.SRQ, error) {
	q, err := srq.New(p, nil)
	if err != nil {
		return nil, err
	}
	s.add("srq", q.Close)
	return q, q.Recv(m, off, msgSize, 1)
}

func seqSRQ(ctx context.Context, e *env, s *scope) error {
	p, m, err := peerRegion(e, s, mr.UsageRecv)
	if err != nil {
		return err
	}
	q, err := srqWithRecv(p, s, m, 0)
	if err != nil {
		return err
	}
	return q.RCQ().Resize(64)
}

// replayConfig is the sequences' connection configuration: the default
// with no spin before a park (conn.NoSpin). The replay fails the k-th
// call of a site, and a spin polls as often as its time allows: which
// poll is the k-th would depend on timing.
func replayConfig() *conn.Config {
	cfg := conn.DefaultConfig()
	cfg.SpinLimit = conn.NoSpin
	return cfg
}

// connectTo connects to the serving counterpart with cfg, posting the
// receive for its message on the request, and returns the connection and
// the region it offered.
func connectTo(ctx context.Context, e *env, s *scope, p *peer.Peer, cfg *conn.Config, local *mr.Local, recv func(*conn.ConnReq) error) (*conn.Conn, *mr.Remote, error) {
	req, err := conn.NewRequest(ctx, p, e.ip, e.servePort, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := recv(req); err != nil {
		req.Close()
		return nil, nil, err
	}
	c, err := req.Connect(nil)
	if err != nil {
		return nil, nil, err
	}
	s.add("conn", c.Close)
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return nil, nil, err
	}
	if ev != rpma.ConnEstablished {
		return nil, nil, fmt.Errorf("connect: %v", ev)
	}
	e.nativeAtomicWrite, e.nativeFlush = c.NativeAtomicWrite(), c.NativeFlush()
	remote, err := mr.RemoteFromExtendedDescriptor(c.PrivateData())
	if err != nil {
		return nil, nil, err
	}
	s.add("hang up", func() error { return hangup(c) })
	return c, remote, nil
}

// hangup disconnects c and waits for CLOSED.
func hangup(c *conn.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Disconnect(); err != nil {
		return err
	}
	for {
		ev, err := c.NextEvent(ctx)
		if err != nil {
			return err
		}
		if ev == rpma.ConnClosed {
			return nil
		}
	}
}

// waitWC waits on q (CQ.Wait, then GetWC) for the completion of
// opContext and checks it succeeded; completions of other operations it
// polls on the way count as seen for later calls.
func waitWC(ctx context.Context, q *cq.CQ, opContext uint64, seen map[uint64]bool) error {
	return waitVia(ctx, q, q.Wait, opContext, seen)
}

// waitVia is waitWC with wait as the blocking wait (CQ.Wait, or a shared
// channel's Conn.Wait).
func waitVia(ctx context.Context, q *cq.CQ, wait func(context.Context) error, opContext uint64, seen map[uint64]bool) error {
	wcs := make([]cq.WC, 4)
	for !seen[opContext] {
		n, err := q.GetWC(wcs)
		switch {
		case errors.Is(err, rpma.ErrNoCompletion):
			if err := wait(ctx); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return err
			}
			seen[wc.OpContext] = true
		}
	}
	return nil
}

// parkedWait waits on q with nothing to come until a wait parks (in the
// poller, which first makes the completion channel an item of the CQ's
// epoll instance) and ends at its short deadline; waits that find an
// event left from earlier operations come first.
func parkedWait(ctx context.Context, q *cq.CQ) error {
	for i := 0; i < 4; i++ {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := q.Wait(short)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return errors.New("a wait with nothing to come kept returning")
}

// dataPath runs each kind of operation once on c and waits for it.
func dataPath(ctx context.Context, c *conn.Conn, local *mr.Local, remote *mr.Remote, recvCQ *cq.CQ) error {
	q := c.CQ()
	seen := map[uint64]bool{}
	steps := []struct {
		post func() error
		q    *cq.CQ
		ctx  uint64
	}{
		{func() error { return c.Write(remote, 0, local, 0, 64, rpma.CompletionAlways, 10) }, q, 10},
		{func() error { return c.Read(local, 64, remote, 0, 64, rpma.CompletionAlways, 11) }, q, 11},
		{func() error { return c.Flush(remote, 0, 64, rpma.FlushVisibility, rpma.CompletionAlways, 12) }, q, 12},
		{func() error { return c.AtomicWrite(remote, 128, [8]byte{1}, rpma.CompletionAlways, 13) }, q, 13},
		{func() error { return c.CompareAndSwap(remote, 256, local, 256, 0, 1, rpma.CompletionAlways, 14) }, q, 14},
		{func() error { return c.FetchAndAdd(remote, 264, local, 264, 1, rpma.CompletionAlways, 15) }, q, 15},
		{func() error { return c.Send(local, 512, msgSize, rpma.CompletionAlways, 16) }, q, 16},
		{func() error {
			return c.WriteAndFlush(remote, 0, local, 0, 64, rpma.FlushVisibility, rpma.CompletionAlways, 17)
		}, q, 17},
		{func() error { return nil }, recvCQ, 1}, // the counterpart's message
	}
	for _, st := range steps {
		if err := st.post(); err != nil {
			return err
		}
		if err := waitWC(ctx, st.q, st.ctx, seen); err != nil {
			return fmt.Errorf("op %d: %w", st.ctx, err)
		}
	}
	// Two writes as one chain, each waited for on its own.
	ts := []conn.Transfer{
		{Remote: remote, RemoteOff: 0, Local: local, LocalOff: 0, Len: 32},
		{Remote: remote, RemoteOff: 32, Local: local, LocalOff: 32, Len: 32},
	}
	var ops [2]conn.Op
	if _, err := c.WriteBatchAsync(ctx, ts, ops[:]); err != nil {
		return err
	}
	for _, op := range ops {
		if _, err := op.Wait(ctx); err != nil {
			return fmt.Errorf("a batch's write: %w", err)
		}
	}
	return nil
}

func seqClient(ctx context.Context, e *env, s *scope) error {
	p, local, err := peerRegion(e, s, mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend|mr.UsageRecv)
	if err != nil {
		return err
	}
	granted, err := region(p, s, 4096, mr.UsageGranted|mr.UsageWriteDst)
	if err != nil {
		return err
	}
	c, remote, err := connectTo(ctx, e, s, p, replayConfig(), local,
		func(r *conn.ConnReq) error { return r.Recv(local, 1024, msgSize, 1) })
	if err != nil {
		return err
	}
	if err := dataPath(ctx, c, local, remote, c.CQ()); err != nil {
		return err
	}
	if err := parkedWait(ctx, c.CQ()); err != nil {
		return err
	}
	g, err := c.Grant(ctx, granted, 0, 512, mr.UsageWriteDst)
	if err != nil {
		return err
	}
	return g.Revoke()
}

func seqClientShared(ctx context.Context, e *env, s *scope) error {
	p, local, err := peerRegion(e, s, mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend|mr.UsageRecv)
	if err != nil {
		return err
	}
	cfg := replayConfig()
	cfg.RCQSize = 4
	cfg.SharedCompChannel = true
	cfg.AckTimeout = 100 * time.Millisecond
	c, remote, err := connectTo(ctx, e, s, p, cfg, local,
		func(r *conn.ConnReq) error { return r.Recv(local, 1024, msgSize, 1) })
	if err != nil {
		return err
	}
	if err := c.Write(remote, 0, local, 0, 64, rpma.CompletionAlways, 10); err != nil {
		return err
	}
	if _, err := c.GetSendComp(ctx); err != nil {
		return err
	}
	// The same through Conn.Wait, the shared channel's wait.
	if err := c.Write(remote, 64, local, 64, 64, rpma.CompletionAlways, 11); err != nil {
		return err
	}
	connWait := func(ctx context.Context) error { _, _, err := c.Wait(ctx); return err }
	if err := waitVia(ctx, c.CQ(), connWait, 11, map[uint64]bool{}); err != nil {
		return err
	}
	if _, err := c.GetRecvComp(ctx); err != nil {
		return err
	}
	// Nothing is left: "no completion", which a failed ibv_get_cq_event
	// also is (librpma's mapping), told apart by its errno.
	_, _, err = c.TryWait()
	var oe *rpma.OpError
	if errors.Is(err, rpma.ErrNoCompletion) && errors.As(err, &oe) && oe.Errno == 0 {
		err = nil
	}
	return err
}

// seqClientPeerTimeout connects with a PeerTimeout and stays idle long
// enough for the library to probe the other side (a zero-length write
// from its timer), then writes.
func seqClientPeerTimeout(ctx context.Context, e *env, s *scope) error {
	p, local, err := peerRegion(e, s, mr.UsageWriteSrc|mr.UsageRecv)
	if err != nil {
		return err
	}
	cfg := replayConfig()
	cfg.PeerTimeout = 400 * time.Millisecond
	c, remote, err := connectTo(ctx, e, s, p, cfg, local,
		func(r *conn.ConnReq) error { return r.Recv(local, 1024, msgSize, 1) })
	if err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond) // idle: two or three probes
	if err := c.Write(remote, 0, local, 0, 64, rpma.CompletionAlways, 10); err != nil {
		return err
	}
	seen := map[uint64]bool{}
	if err := waitWC(ctx, c.CQ(), 1, seen); err != nil {
		return err
	}
	return waitWC(ctx, c.CQ(), 10, seen)
}

func seqClientSRQ(ctx context.Context, e *env, s *scope) error {
	p, local, err := peerRegion(e, s, mr.UsageRecv|mr.UsageSend)
	if err != nil {
		return err
	}
	q, err := srqWithRecv(p, s, local, 1024)
	if err != nil {
		return err
	}
	cfg := replayConfig()
	cfg.SRQ = q
	c, _, err := connectTo(ctx, e, s, p, cfg, local, func(*conn.ConnReq) error { return nil })
	if err != nil {
		return err
	}
	if err := c.Send(local, 512, msgSize, rpma.CompletionAlways, 16); err != nil {
		return err
	}
	if err := waitWC(ctx, c.CQ(), 16, map[uint64]bool{}); err != nil {
		return err
	}
	return waitWC(ctx, q.RCQ(), 1, map[uint64]bool{})
}

// listen listens at e.connectPort, where a counterpart keeps connecting.
func listen(e *env, s *scope) (*ep.Endpoint, *peer.Peer, error) {
	p, err := openPeer(e, s)
	if err != nil {
		return nil, nil, err
	}
	l, err := ep.Listen(p, e.ip, e.connectPort)
	if err != nil {
		return nil, nil, err
	}
	s.add("endpoint", l.Close)
	return l, p, nil
}

func seqServer(ctx context.Context, e *env, s *scope) error {
	l, p, err := listen(e, s)
	if err != nil {
		return err
	}
	local, err := region(p, s, 4096, mr.UsageRecv)
	if err != nil {
		return err
	}
	req, err := l.NextConnReq(ctx, nil)
	if err != nil {
		return err
	}
	if err := req.Recv(local, 0, msgSize, 1); err != nil {
		req.Close()
		return err
	}
	c, err := req.Connect([]byte("hello"))
	if err != nil {
		return err
	}
	s.add("conn", c.Close)
	for _, want := range []rpma.ConnEvent{rpma.ConnEstablished, rpma.ConnClosed} {
		ev, err := c.NextEvent(ctx)
		if err != nil {
			return err
		}
		if ev != want {
			return fmt.Errorf("accept: %v, want %v", ev, want)
		}
	}
	return nil
}

func seqReject(ctx context.Context, e *env, s *scope) error {
	l, _, err := listen(e, s)
	if err != nil {
		return err
	}
	req, err := l.NextConnReq(ctx, nil)
	if err != nil {
		return err
	}
	// A Reject that fails part way leaves the request to be closed
	// again, as a user would.
	s.add("request", req.Close)
	return req.Reject()
}
