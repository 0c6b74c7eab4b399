package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// server accepts rpmaperf clients: each connection gets a region of its
// own, and its messages are echoed.
type server struct {
	cfg    *config
	p      *peer.Peer
	stderr io.Writer

	mu       sync.Mutex
	accepted int   // connections accepted
	active   int   // connections not ended yet
	expected int   // connections of the current client's run
	failed   error // the first connection's failure
	done     chan struct{}
}

// sendTag marks the op context of the server's echoes.
const sendTag = 1 << 32

// runServer serves until the client's connections have ended (or, with
// -forever, until ctx ends). It prints the address it listens at first.
func runServer(ctx context.Context, cfg *config, stdout, stderr io.Writer) (err error) {
	p, closePeer, err := openPeer(cfg.addr, rpma.IbvContextLocal)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closePeer()) }()
	e, err := ep.Listen(p, cfg.addr, cfg.port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer func() {
		if cerr := e.Shutdown(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("ep.Endpoint.Shutdown: %w", cerr))
		}
	}()
	fmt.Fprintf(stdout, "rpmaperf: server listening at %s port %s\n", cfg.addr, e.Port())

	s := &server{cfg: cfg, p: p, stderr: stderr, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		req, err := e.NextConnReq(ctx, s.connConfig())
		if err != nil {
			if ctx.Err() != nil {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.failed
			}
			return fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
		}
		s.started()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.ended(s.handle(ctx, req))
		}()
	}
}

// connConfig sizes every connection for the most a client may keep in
// flight: maxLanes messages, each echoed, twice as many receives.
func (s *server) connConfig() *conn.Config {
	return &conn.Config{
		SQSize:      maxLanes + 8,
		RQSize:      2 * maxLanes,
		CQSize:      3*maxLanes + 8,
		PeerTimeout: s.cfg.timeout,
	}
}

func (s *server) started() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted++
	s.active++
}

// ended counts a connection's end; the last one of a client's run ends a
// server that does not serve forever.
func (s *server) ended(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if err != nil {
		fmt.Fprintf(s.stderr, "rpmaperf: server: %v\n", err)
		if s.failed == nil {
			s.failed = err
		}
	}
	if !s.cfg.forever && s.active == 0 && (s.accepted >= s.expected || err != nil) {
		select {
		case <-s.done:
		default:
			close(s.done)
		}
	}
}

func (s *server) expect(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.expected == 0 || s.cfg.forever {
		s.expected = n
	}
}

// handle accepts one connection request, serves the connection until the
// client disconnects, and releases everything it holds.
func (s *server) handle(ctx context.Context, req *conn.ConnReq) (err error) {
	h, err := parseHello(req.PrivateData())
	if err != nil {
		return errors.Join(fmt.Errorf("%v: %w", req.PeerAddr(), err), req.Reject())
	}
	s.expect(h.conns)
	var cleanup []func() error
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			err = errors.Join(err, cleanup[i]())
		}
	}()
	region, err := s.region(h.regionSize, &cleanup)
	if err != nil {
		return errors.Join(err, req.Close())
	}
	msgs, err := s.postReceives(req, h, &cleanup)
	if err != nil {
		return errors.Join(err, req.Close())
	}
	pcfg := peer.Cfg{DirectWriteToPMem: s.cfg.directPMem}
	c, err := req.Connect(offer{region: region.ExtendedDescriptor(), cfg: pcfg.Descriptor()}.marshal())
	if err != nil {
		return errors.Join(fmt.Errorf("conn.ConnReq.Connect: %w", err), req.Close())
	}
	cleanup = append(cleanup, closer("conn.Conn.Close", c.Close))
	ectx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	if ev, err := c.NextEvent(ectx); err != nil || ev != rpma.ConnEstablished {
		return fmt.Errorf("conn.Conn.NextEvent: %v, %w", ev, err)
	}
	return s.echo(ctx, c, msgs, h)
}

// region allocates and registers the region a connection reads and
// writes, filled with the pattern reads check.
func (s *server) region(size int, cleanup *[]func() error) (*mr.Local, error) {
	var mem *pmem.Region
	var err error
	if s.cfg.pmemPath != "" {
		mem, err = pmem.Map(s.cfg.pmemPath, int64(size))
	} else {
		mem, err = pmem.Alloc(size)
	}
	if err != nil {
		return nil, fmt.Errorf("allocating %d bytes: %w", size, err)
	}
	*cleanup = append(*cleanup, closer("pmem.Region.Close", mem.Close))
	b := mem.Bytes()[:size]
	for i := range b {
		b[i] = readByte(i)
	}
	usage := mr.UsageReadSrc | mr.UsageWriteDst | mr.UsageFlushVisibility | mr.UsageFlushPersistent | mr.UsageAtomicDst
	m, err := mr.Reg(s.p, b, usage)
	if err != nil {
		return nil, fmt.Errorf("mr.Reg: %w", err)
	}
	*cleanup = append(*cleanup, closer("mr.Local.Dereg", m.Dereg))
	return m, nil
}

// postReceives registers the message buffers of a client that sends and
// posts a receive into each (before the accept: the client may send at
// once). Messages are echoed from where they landed.
func (s *server) postReceives(req *conn.ConnReq, h hello, cleanup *[]func() error) (*msgBuffers, error) {
	if h.maxMsg == 0 {
		return nil, nil
	}
	lay := newLayout(2*h.lanes, h.maxMsg)
	mem, err := pmem.Alloc(lay.area)
	if err != nil {
		return nil, fmt.Errorf("pmem.Alloc: %w", err)
	}
	*cleanup = append(*cleanup, closer("pmem.Region.Close", mem.Close))
	m, err := mr.Reg(s.p, mem.Bytes(), mr.UsageRecv|mr.UsageSend)
	if err != nil {
		return nil, fmt.Errorf("mr.Reg: %w", err)
	}
	*cleanup = append(*cleanup, closer("mr.Local.Dereg", m.Dereg))
	b := &msgBuffers{m: m, lay: lay, maxMsg: h.maxMsg}
	for k := range lay.lanes {
		if err := req.Recv(m, lay.first(k), h.maxMsg, uint64(k)); err != nil {
			return nil, fmt.Errorf("conn.ConnReq.Recv: %w", err)
		}
	}
	return b, nil
}

// msgBuffers are the server's receive buffers, a slot per receive.
type msgBuffers struct {
	m      *mr.Local
	lay    layout
	maxMsg int
}

// echo serves an established connection: it sends every message back
// from the buffer it landed in, and posts that buffer's receive again once
// the echo has completed. It returns nil when the client disconnects.
func (s *server) echo(ctx context.Context, c *conn.Conn, b *msgBuffers, h hello) error {
	q := c.CQ()
	wcs := make([]cq.WC, 64)
	for {
		n, err := q.GetWC(wcs)
		if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			return fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		if n == 0 {
			if err := q.Wait(ctx); err != nil {
				return s.hangup(c, err)
			}
			continue
		}
		for _, wc := range wcs[:n] {
			if err := s.echoOne(c, b, wc); err != nil {
				return err
			}
		}
	}
}

func (s *server) echoOne(c *conn.Conn, b *msgBuffers, wc cq.WC) error {
	if err := wc.Err(); err != nil {
		return fmt.Errorf("%v: completion: %w", c.PeerAddr(), err)
	}
	k := int(wc.OpContext &^ sendTag)
	if b == nil || k >= b.lay.lanes {
		return fmt.Errorf("%v: unexpected completion (op context %#x)", c.PeerAddr(), wc.OpContext)
	}
	if wc.OpContext&sendTag != 0 { // the echo left: the buffer is free
		if err := c.Recv(b.m, b.lay.first(k), b.maxMsg, uint64(k)); err != nil {
			return fmt.Errorf("conn.Conn.Recv: %w", err)
		}
		return nil
	}
	if err := c.Send(b.m, b.lay.first(k), int(wc.ByteLen), rpma.CompletionAlways, sendTag|uint64(k)); err != nil {
		return fmt.Errorf("conn.Conn.Send: %w", err)
	}
	return nil
}

// hangup ends a connection whose wait ended with werr: the client's
// disconnect (CLOSED) is the normal end.
func (s *server) hangup(c *conn.Conn, werr error) error {
	var cee *rpma.ConnEventError
	if !errors.As(werr, &cee) || cee.Event != rpma.ConnClosed {
		return errors.Join(fmt.Errorf("%v: cq.CQ.Wait: %w", c.PeerAddr(), werr), c.Disconnect())
	}
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Conn.Disconnect: %w", err)
	}
	return nil
}

// openPeer opens the device addr binds to or routes through and a peer
// on it; closePeer closes both.
func openPeer(addr string, typ rpma.UtilIbvContextType) (*peer.Peer, func() error, error) {
	dev, err := peer.DeviceForAddress(addr, typ)
	if err != nil {
		return nil, nil, fmt.Errorf("peer.DeviceForAddress(%s): %w", addr, err)
	}
	p, err := peer.New(dev)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("peer.New: %w", err), dev.Close())
	}
	return p, func() error {
		return errors.Join(closer("peer.Peer.Close", p.Close)(), closer("peer.Device.Close", dev.Close)())
	}, nil
}

// closer wraps a close call so that its error names it.
func closer(name string, f func() error) func() error {
	return func() error {
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
}
