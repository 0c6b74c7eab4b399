// Command server is the server of example 02-read-to-volatile, the Go port
// of librpma's examples/02-read-to-volatile/server.c: it exposes
// "Hello client!" in a DRAM memory region registered for remote reads,
// hands the region's descriptor to the client in the accept private data
// (common_data) and waits for the client to read it and hang up. It prints
// nothing.
//
//	server <server_address> <port>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// timeout bounds the whole run: every wait gives up once it has passed
// (librpma's examples wait forever).
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

func run(addr, port string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// the message: "Hello client!" and its NUL, 14 bytes
	msg := append([]byte(common.HelloClientMsg), 0)
	mem, err := pmem.Alloc(len(msg))
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeWith(&err, "pmem.Region.Close", mem.Close)
	buf := mem.Bytes()[:len(msg)]
	copy(buf, msg)

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

	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer closeWith(&err, "ep.Shutdown", e.Shutdown)

	src, err := mr.Reg(p, buf, mr.UsageReadSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", src.Dereg)

	// the region's descriptor for the client
	desc := src.Descriptor()
	pdata, err := common.CommonData{DataOffset: 0, MRDesc: desc[:]}.MarshalBinary()
	if err != nil {
		return err
	}

	c, err := accept(ctx, e, nil, pdata)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the client reads, then hangs up
	return waitForCloseAndDisconnect(ctx, c)
}

// accept mirrors server_accept_connection of librpma's examples: it waits
// for a connection request, accepts it with pdata and waits for the
// connection to be established.
func accept(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ep.NextConnReq: %w", err)
	}
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	} else if err != nil {
		err = fmt.Errorf("conn.NextEvent: %w", err)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitForCloseAndDisconnect mirrors common_wait_for_conn_close_and_disconnect:
// the other side hangs up.
func waitForCloseAndDisconnect(ctx context.Context, c *conn.Conn) error {
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.NextEvent: %w", err)
	}
	if ev != rpma.ConnClosed {
		fmt.Fprintf(os.Stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
	}
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Disconnect: %w", err)
	}
	return c.Close()
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
