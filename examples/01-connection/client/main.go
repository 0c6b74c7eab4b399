// Command client is the client of example 01-connection, the Go port of
// librpma's examples/01-connection/client.c: it connects, sending
// "Hello server!" as its private data, prints the private data the server
// accepted with, then waits for the server to hang up. A rejected
// connection (no server yet) is retried up to 10 times, 5 s apart.
//
//	client <addr> <port>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// timeout bounds each attempt to connect, and the wait for the server to
// hang up (librpma's examples wait forever).
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
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeWith(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeWith(&err, "peer.Close", p.Close)

	c, err := connect(p, addr, port)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the server's greeting
	fmt.Printf("Received a message: %s\n", common.CString(c.PrivateData()))

	// the server hangs up
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
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

// connect connects to addr:port with our greeting as private data, up to
// common.ConnectMaxRetry times while the server rejects the connection.
func connect(p *peer.Peer, addr, port string) (*conn.Conn, error) {
	pdata := append([]byte(common.HelloServerMsg), 0)
	for retry := 1; ; retry++ {
		c, ev, err := attempt(p, addr, port, pdata)
		if err != nil {
			return nil, err
		}
		switch ev {
		case rpma.ConnEstablished:
			return c, nil
		case rpma.ConnRejected:
			c.Close()
			if retry == common.ConnectMaxRetry {
				return nil, errors.New("the retry number exceeded. Closing")
			}
			fmt.Fprintln(os.Stderr, "Retrying...")
			time.Sleep(common.ConnectRetryDelay)
		default:
			c.Close()
			return nil, fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
		}
	}
}

// attempt makes one connection request and returns its first event.
func attempt(p *peer.Peer, addr, port string, pdata []byte) (*conn.Conn, rpma.ConnEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := conn.NewRequest(ctx, p, addr, port, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("conn.NewRequest: %w", err)
	}
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, 0, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	ev, err := c.NextEvent(ctx)
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("conn.NextEvent: %w", err)
	}
	return c, ev, nil
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
