// Command client is the client of example 06scch-multiple-connections, the
// Go port of librpma's examples/06scch-multiple-connections/client.c (the
// client of 06-multiple-connections with one more name): it picks a
// name with the C library's rand() seeded with <seed> (so a C and a Go
// client pick the same name), exposes it in a 32-byte memory region
// registered for remote reads, connects with the region's descriptor as
// private data (common_data) and waits for the server to read the name and
// hang up.
//
//	client <server_address> <port> <seed>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// timeout bounds the whole run: every wait gives up once it has passed
// (librpma's examples wait forever).
const timeout = 60 * time.Second

// names are the names the client picks from.
var names = common.Names06scch

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> <seed>\n", os.Args[0])
		os.Exit(255)
	}
	// as librpma's examples: the library's INFO messages and above on stderr
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	seed, err := common.StrtoulNoError(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "strtoul(seed) overflowed")
		os.Exit(255)
	}
	if err := run(os.Args[1], os.Args[2], seed); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(255)
	}
}

func run(addr, port string, seed uint64) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// the name, NUL-terminated in 32 bytes of DRAM
	mem, err := pmem.Alloc(common.MaxNameSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeWith(&err, "pmem.Region.Close", mem.Close)
	buf := mem.Bytes()[:common.MaxNameSize]
	name := common.PickName(names, seed)
	enc := common.EncodeName(name)
	copy(buf, enc[:])
	fmt.Printf("My names is: %s\n", common.CString(buf))

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

	src, err := mr.Reg(p, buf, mr.UsageReadSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", src.Dereg)
	desc := src.Descriptor()
	pdata, err := common.CommonData{DataOffset: 0, MRDesc: desc[:]}.MarshalBinary()
	if err != nil {
		return err
	}

	c, err := connect(ctx, p, addr, port, nil, pdata)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the server reads the name, then hangs up
	return waitForCloseAndDisconnect(ctx, c)
}

// connect mirrors client_connect of librpma's examples: it connects to
// addr:port with cfg and pdata and waits for the connection to be
// established.
func connect(ctx context.Context, p *peer.Peer, addr, port string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	req, err := conn.NewRequest(ctx, p, addr, port, cfg)
	if err != nil {
		return nil, fmt.Errorf("conn.NewRequest: %w", err)
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
