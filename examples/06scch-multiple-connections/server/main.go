// Command server is the server of example 06scch-multiple-connections, the
// Go port of librpma's examples/06scch-multiple-connections/server.c: the
// server of 06-multiple-connections with a shared completion channel, so
// the completions of a connection are waited for on the connection
// (conn.Conn.Wait) rather than on its CQ. It serves up to 10 clients at a
// time; from each one's connection private data (common_data) it takes the
// memory region holding the client's name, reads the name with an RDMA
// read into the client's 32-byte slot of its own memory, prints it and
// hangs up. After 15 s without any event it says "Server timed out." and
// ends.
//
//	server <server_address> <port>
//
// The C server multiplexes the endpoint's, the connections' and the
// channels' file descriptors with epoll in one thread; this one gives each
// connection a goroutine that waits in the library's (poller-based) calls,
// and keeps the slots, the output and the idle timeout in the main
// goroutine.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// timeout bounds the exchange with each client (the server itself ends after
// common.Timeout15s without events).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port>\n", os.Args[0])
		os.Exit(255)
	}
	// as librpma's examples: the library's INFO messages and above on stderr
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(255)
	}
}

// event is what the goroutines tell the main one.
type event struct {
	req  *conn.ConnReq // a connection request
	err  error         // the endpoint failed
	slot int           // a connection's slot, for what follows
	name string        // the name read
	read bool          // name is set
	done bool          // the connection is gone
}

// server is what the connections share.
type server struct {
	dst    *mr.Local // ClientMax slots of MaxNameSize bytes
	names  []byte
	events chan event
	wg     sync.WaitGroup
}

func run(addr, port string) (err error) {
	// the names: one 32-byte slot per client
	mem, err := pmem.Alloc(common.MaxNameSize * common.ClientMax)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeWith(&err, "pmem.Region.Close", mem.Close)
	s := &server{names: mem.Bytes()[:common.MaxNameSize*common.ClientMax], events: make(chan event)}

	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeWith(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeWith(&err, "peer.Close", p.Close)

	if s.dst, err = mr.Reg(p, s.names, mr.UsageReadDst); err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", s.dst.Dereg)

	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer closeWith(&err, "ep.Shutdown", e.Shutdown)

	fmt.Println("Today I have got in touch with:")

	// at the end: stop every goroutine and wait for them, before the
	// deferred closes above run
	ctx, cancel := context.WithCancel(context.Background())
	defer s.wg.Wait()
	defer cancel()

	// every connection gets a shared completion channel
	cfg := conn.DefaultConfig()
	cfg.SharedCompChannel = true

	// the endpoint's connection requests
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			req, err := e.NextConnReq(ctx, cfg)
			if !s.send(ctx, event{req: req, err: err}) && req != nil {
				req.Close()
			}
			if err != nil {
				return
			}
		}
	}()

	var busy [common.ClientMax]bool
	idle := time.NewTimer(common.Timeout15s)
	defer idle.Stop()
	for {
		select {
		case <-idle.C:
			fmt.Fprintln(os.Stderr, "Server timed out.")
			return nil
		case ev := <-s.events:
			idle.Reset(common.Timeout15s)
			switch {
			case ev.err != nil:
				return fmt.Errorf("ep.NextConnReq: %w", ev.err)
			case ev.req != nil:
				slot := -1
				for i := range busy {
					if !busy[i] {
						slot = i
						break
					}
				}
				if slot < 0 {
					fmt.Fprintf(os.Stderr, "no free slot for a new client (%d connected): rejected\n", common.ClientMax)
					ev.req.Reject()
					continue
				}
				busy[slot] = true
				s.wg.Add(1)
				go s.serve(ctx, slot, ev.req)
			case ev.read:
				fmt.Printf("- %s\n", ev.name)
			case ev.done:
				busy[ev.slot] = false
			}
		}
	}
}

// send hands ev to the main goroutine, unless the server is ending.
func (s *server) send(ctx context.Context, ev event) bool {
	select {
	case s.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// serve accepts a client's connection into slot, reads its name and hangs
// up.
func (s *server) serve(ctx context.Context, slot int, req *conn.ConnReq) {
	defer s.wg.Done()
	defer s.send(ctx, event{slot: slot, done: true})
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	c, err := req.Connect(nil)
	if err != nil {
		req.Close()
		fmt.Fprintf(os.Stderr, "[%d] conn.ConnReq.Connect: %v\n", slot, err)
		return
	}
	defer c.Close()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[%d] conn.NextEvent: %v\n", slot, err)
		return
	}
	if ev != rpma.ConnEstablished {
		return // CLOSED or anything else: the client is gone
	}
	s.send(ctx, event{slot: slot})

	if name, err := s.readName(ctx, slot, c); err != nil {
		fmt.Fprintf(os.Stderr, "[%d] %v\n", slot, err)
	} else {
		s.send(ctx, event{slot: slot, name: name, read: true})
	}

	// hang up in every case
	if err := c.Disconnect(); err != nil {
		fmt.Fprintf(os.Stderr, "[%d] conn.Disconnect: %v\n", slot, err)
		return
	}
	if _, err := c.NextEvent(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "[%d] conn.NextEvent: %v\n", slot, err)
	}
}

// readName reads the name the client's private data points to into slot.
func (s *server) readName(ctx context.Context, slot int, c *conn.Conn) (string, error) {
	pdata := c.PrivateData()
	cd, err := common.DecodeCommonDataMROnly(pdata)
	if err != nil {
		return "", fmt.Errorf("received connection's private data is too small (%d < %d)", len(pdata), common.CommonDataSize)
	}
	src, err := mr.RemoteFromDescriptor(cd.MRDesc)
	if err != nil {
		return "", fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	off := slot * common.MaxNameSize
	if err := c.Read(s.dst, off, src, 0, common.MaxNameSize, rpma.CompletionAlways, 0); err != nil {
		return "", fmt.Errorf("conn.Read: %w", err)
	}
	wc, err := waitForCompletion(ctx, c)
	if err != nil {
		return "", err
	}
	if wc.Status != rpma.WCSuccess {
		return "", fmt.Errorf("rpma_read() failed: %s", wc.Status)
	}
	if wc.Opcode != rpma.WCRDMARead {
		return "", fmt.Errorf("received unexpected wc.opcode value (%d != %d)", wc.Opcode, rpma.WCRDMARead)
	}
	return common.CString(s.names[off : off+common.MaxNameSize]), nil
}

// waitForCompletion waits for the next work completion of the connection
// on its shared completion channel (rpma_conn_wait, then rpma_cq_get_wc on
// the CQ it names).
func waitForCompletion(ctx context.Context, c *conn.Conn) (cq.WC, error) {
	wc := make([]cq.WC, 1)
	q := c.CQ()
	for {
		_, err := q.GetWC(wc)
		if err == nil {
			return wc[0], nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return cq.WC{}, fmt.Errorf("cq.GetWC: %w", err)
		}
		if q, _, err = c.Wait(ctx); err != nil {
			return cq.WC{}, fmt.Errorf("conn.Wait: %w", err)
		}
	}
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
