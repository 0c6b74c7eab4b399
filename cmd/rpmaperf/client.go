package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// clientConn is one of the client's connections, with the server's region
// and the client's own memory, laid out alike (layout).
type clientConn struct {
	c      *conn.Conn
	remote *mr.Remote
	local  *mr.Local
	mem    *pmem.Region
	lay    layout
}

// runClient connects, measures every operation at every size, prints a
// result for each, and disconnects.
func runClient(ctx context.Context, cfg *config, stdout io.Writer) (err error) {
	p, closePeer, err := openPeer(cfg.addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closePeer()) }()

	lay := newLayout(cfg.lanes(), cfg.maxSize())
	h := hello{conns: cfg.conns, lanes: cfg.lanes(), regionSize: lay.size}
	if cfg.hasSend() {
		h.maxMsg = cfg.maxSize()
	}
	var conns []*clientConn
	defer func() {
		for _, cc := range conns {
			err = errors.Join(err, cc.close(cfg.timeout))
		}
	}()
	for range cfg.conns {
		cc, err := dial(ctx, p, cfg, h, lay)
		if err != nil {
			return err
		}
		conns = append(conns, cc)
	}

	rep := newReporter(cfg, stdout)
	run := 0
	for _, o := range cfg.ops {
		for _, size := range o.sizesFor(cfg.sizes) {
			run++
			m := &measurement{cfg: cfg, conns: conns, op: o, size: size, seed: run * 37}
			res, err := m.run(ctx)
			if o.flushType() == rpma.FlushPersistent && errors.Is(err, rpma.ErrNotSupported) {
				err = fmt.Errorf("%w (a server run with -direct-pmem=false allows no flush to persistence)", err)
			}
			if err != nil {
				return fmt.Errorf("%s, %d bytes: %w", o, size, err)
			}
			if err := rep.print(res); err != nil {
				return err
			}
		}
	}
	if cfg.stats {
		for i, cc := range conns {
			b, err := json.Marshal(cc.c.Stats())
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(stdout, "stats conn=%d %s\n", i, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// connConfig sizes the client's queues for its operations in flight: a
// write-and-flush takes two send-queue slots, a ping-pong a send and a
// receive, each with its completion.
func connConfig(cfg *config) *conn.Config {
	n := cfg.lanes()
	return &conn.Config{
		SQSize:      2*n + 4,
		RQSize:      n + 1,
		CQSize:      2*n + 8,
		PeerTimeout: cfg.timeout,
	}
}

// dial connects to the server, sends it h and takes the region it offers.
func dial(ctx context.Context, p *peer.Peer, cfg *config, h hello, lay layout) (*clientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	cc := &clientConn{lay: lay}
	mem, err := pmem.Alloc(lay.size)
	if err != nil {
		return nil, fmt.Errorf("pmem.Alloc: %w", err)
	}
	cc.mem = mem
	if cc.local, err = mr.Reg(p, mem.Bytes()[:lay.size], mr.UsageWriteSrc|mr.UsageReadDst|mr.UsageSend|mr.UsageRecv); err != nil {
		return nil, errors.Join(fmt.Errorf("mr.Reg: %w", err), cc.close(cfg.timeout))
	}
	req, err := conn.NewRequest(ctx, p, cfg.addr, cfg.port, connConfig(cfg))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("conn.NewRequest(%s port %s): %w", cfg.addr, cfg.port, err), cc.close(cfg.timeout))
	}
	if cc.c, err = req.Connect(h.marshal()); err != nil {
		return nil, errors.Join(fmt.Errorf("conn.ConnReq.Connect: %w", err), req.Close(), cc.close(cfg.timeout))
	}
	ev, err := cc.c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = fmt.Errorf("connection %v (no rpmaperf server at %s port %s?)", ev, cfg.addr, cfg.port)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("conn.Conn.NextEvent: %w", err), cc.close(cfg.timeout))
	}
	remote, pcfg, err := parseOffer(cc.c.PrivateData())
	if err != nil {
		return nil, errors.Join(err, cc.close(cfg.timeout))
	}
	cc.remote = remote
	if err := cc.c.ApplyRemotePeerCfg(pcfg); err != nil {
		return nil, errors.Join(fmt.Errorf("conn.Conn.ApplyRemotePeerCfg: %w", err), cc.close(cfg.timeout))
	}
	if remote.Size() < uint64(lay.size) {
		return nil, errors.Join(fmt.Errorf("the server offered %d bytes, want %d", remote.Size(), lay.size), cc.close(cfg.timeout))
	}
	return cc, nil
}

// close disconnects (waiting at most timeout for the server's side) and
// releases everything cc holds.
func (cc *clientConn) close(timeout time.Duration) error {
	var errs []error
	if cc.c != nil {
		if err := cc.c.Disconnect(); err != nil {
			errs = append(errs, fmt.Errorf("conn.Conn.Disconnect: %w", err))
		} else if cc.c.Broken() == nil {
			errs = append(errs, waitClosed(cc.c, timeout))
		}
		errs = append(errs, closer("conn.Conn.Close", cc.c.Close)())
	}
	if cc.local != nil {
		errs = append(errs, closer("mr.Local.Dereg", cc.local.Dereg)())
	}
	if cc.mem != nil {
		errs = append(errs, closer("pmem.Region.Close", cc.mem.Close)())
	}
	return errors.Join(errs...)
}

// waitClosed waits for the CLOSED (or LOST) event that ends a connection
// after its disconnect.
func waitClosed(c *conn.Conn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		ev, err := c.NextEvent(ctx)
		if err != nil {
			return fmt.Errorf("waiting for the disconnect: conn.Conn.NextEvent: %w", err)
		}
		if ev == rpma.ConnClosed || ev == rpma.ConnLost {
			return nil
		}
	}
}
