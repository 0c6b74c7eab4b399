// Command server is the server of example 01-connection, the Go port of
// librpma's examples/01-connection/server.c: it accepts one connection,
// sending "Hello client!" as its private data, prints the private data the
// client sent, then disconnects.
//
//	server <addr> <port>
//
// Its client is ../client; either side interoperates with librpma's C one.
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
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// timeout bounds the whole run: every wait gives up once it has passed
// (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "usage: %s <addr> <port>\n", os.Args[0])
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

	// wait for a connection request and accept it with our greeting
	req, err := e.NextConnReq(ctx, nil)
	if err != nil {
		return fmt.Errorf("ep.NextConnReq: %w", err)
	}
	c, err := req.Connect(append([]byte(common.HelloClientMsg), 0))
	if err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	defer closeWith(&err, "conn.Close", c.Close)
	if err := expectEvent(ctx, c, rpma.ConnEstablished); err != nil {
		return err
	}

	// the client's greeting
	if pdata := c.PrivateData(); pdata == nil {
		fmt.Println("No message received")
	} else {
		fmt.Printf("Received a message: %s\n", common.CString(pdata))
	}

	// the server hangs up
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Disconnect: %w", err)
	}
	if err := expectEvent(ctx, c, rpma.ConnClosed); err != nil {
		return err
	}
	return c.Close()
}

// expectEvent waits for the connection's next event, which must be want.
func expectEvent(ctx context.Context, c *conn.Conn, want rpma.ConnEvent) error {
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.NextEvent: %w", err)
	}
	if ev != want {
		return fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	}
	return nil
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
