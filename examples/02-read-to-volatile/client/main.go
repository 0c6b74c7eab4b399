// Command client is the client of example 02-read-to-volatile, the Go port
// of librpma's examples/02-read-to-volatile/client.c: it connects, takes the
// server's memory region from the accept private data (common_data), reads
// all of it into a local DRAM buffer with one RDMA read and prints it.
//
//	client <server_address> <port>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
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

	// the sink: 1 KiB of DRAM
	mem, err := pmem.Alloc(common.Kilobyte)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeWith(&err, "pmem.Region.Close", mem.Close)
	buf := mem.Bytes()[:common.Kilobyte]

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

	dst, err := mr.Reg(p, buf, mr.UsageReadDst)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", dst.Dereg)

	c, err := connect(ctx, p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the server's memory region
	pdata := c.PrivateData()
	if pdata == nil {
		return errors.New("the server sent no private data")
	}
	cd, err := common.DecodeCommonDataMROnly(pdata)
	if err != nil {
		return err
	}
	src, err := mr.RemoteFromDescriptor(cd.MRDesc)
	if err != nil {
		return fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	size := src.Size()
	if size > common.Kilobyte {
		return fmt.Errorf("remote memory region size too big to reading to the sink buffer of the assumed size (%d > %d)", size, common.Kilobyte)
	}

	// read all of it
	if err := c.Read(dst, 0, src, 0, int(size), rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Read: %w", err)
	}
	wc, err := waitForCompletion(ctx, c.CQ())
	if err != nil {
		return err
	}
	if wc.Status != rpma.WCSuccess {
		return fmt.Errorf("rpma_read() failed: %s", wc.Status)
	}
	if wc.Opcode != rpma.WCRDMARead {
		return fmt.Errorf("unexpected wc.opcode value (%d != %d)", wc.Opcode, rpma.WCRDMARead)
	}

	fmt.Printf("Read a message: %s\n", common.CString(buf))

	return disconnectAndWaitForClose(ctx, c)
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

// waitForCompletion waits for the next work completion of q (rpma_cq_wait
// and rpma_cq_get_wc).
func waitForCompletion(ctx context.Context, q *cq.CQ) (cq.WC, error) {
	wc := make([]cq.WC, 1)
	for {
		_, err := q.GetWC(wc)
		if err == nil {
			return wc[0], nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return cq.WC{}, fmt.Errorf("cq.GetWC: %w", err)
		}
		if err := q.Wait(ctx); err != nil {
			return cq.WC{}, fmt.Errorf("cq.Wait: %w", err)
		}
	}
}

// disconnectAndWaitForClose mirrors common_disconnect_and_wait_for_conn_close:
// this side hangs up.
func disconnectAndWaitForClose(ctx context.Context, c *conn.Conn) error {
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Disconnect: %w", err)
	}
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.NextEvent: %w", err)
	}
	if ev != rpma.ConnClosed {
		fmt.Fprintf(os.Stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
	}
	return c.Close()
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
