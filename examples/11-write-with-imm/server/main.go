// Command server is the server of example 11-write-with-imm, the Go port of
// librpma's examples/11-write-with-imm/server.c.
//
//	server <server_address> <port>
//
// It exposes a 1 KiB write destination to the client in its private data
// (common_data) and posts a 1-byte receive, which the client's write with
// immediate data consumes. The completion must be
// IBV_WC_RECV_RDMA_WITH_IMM with IBV_WC_WITH_IMM, and its immediate value
// must equal the uint32 the client wrote at the start of the region; the
// server prints "The value '<v>' was written together with immediate data
// '<imm>'" and waits for the client to disconnect.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

const usage = "usage: %s <server_address> <port>\n"

// timeout bounds every wait (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, usage, os.Args[0])
		os.Exit(255)
	}
	// as every librpma example: the library's INFO messages on stderr
	rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(exitCode(err))
	}
}

// exitCode is what the C example returns: the librpma error code, else -1.
func exitCode(err error) int {
	if code, ok := rpma.CodeOf(err); ok {
		return int(code) & 0xff
	}
	return 255
}

func run(addr, port string) (err error) {
	// prepare memory: the write destination and a 1-byte receive buffer
	dstBuf, err := pmem.Alloc(common.Kilobyte)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", dstBuf.Close)
	recvBuf, err := pmem.Alloc(1)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", recvBuf.Close)

	// lookup the device via the address and create a new peer using it
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeLater(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeLater(&err, "peer.Peer.Close", p.Close)

	// register the memory
	dstMR, err := mr.Reg(p, dstBuf.Bytes(), mr.UsageWriteDst)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", dstMR.Dereg)
	recvMR, err := mr.Reg(p, recvBuf.Bytes(), mr.UsageRecv)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", recvMR.Dereg)

	// the data for the client's write: the region's descriptor, offset 0
	desc := dstMR.Descriptor()
	pdata, err := common.CommonData{DataOffset: 0, MRDesc: desc[:]}.MarshalBinary()
	if err != nil {
		return err
	}

	// start a listening endpoint at addr:port
	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer closeLater(&err, "ep.Endpoint.Shutdown", e.Shutdown)

	// receive an incoming connection request
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	req, err := e.NextConnReq(ctx, nil)
	cancel()
	if err != nil {
		return fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
	}
	// prepare to receive an immediate data from the client
	if err := req.Recv(recvMR, 0, 1, 0); err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Recv: %w", err)
	}
	// accept the connection request and obtain the connection object
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)
	// wait for the connection to be established
	ev, err := nextEvent(c)
	if err != nil {
		return err
	}
	if ev != rpma.ConnEstablished {
		return fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	}

	err = receive(c, dstBuf.Bytes())
	return errors.Join(err, waitForCloseAndDisconnect(c))
}

// receive validates the completion of the client's write with immediate
// data against the value written.
func receive(c *conn.Conn, dst []byte) error {
	wc, err := getWC(c.CQ())
	if err != nil {
		return err
	}
	if wc.Status != rpma.WCSuccess {
		return cErr("Received unexpected completion: %s", wc.Status)
	}
	if wc.Opcode != rpma.WCRecvRDMAWithImm {
		return cErr("Received unexpected type of operation (%d != %d)", wc.Opcode, rpma.WCRecvRDMAWithImm)
	}
	if wc.Flags&cq.WithImm == 0 {
		return cErr("Received an unexpected completion flag (no IBV_WC_WITH_IMM)")
	}
	expImm, err := common.DecodeImm(dst)
	if err != nil {
		return err
	}
	if wc.Imm != expImm {
		return cErr("Received unexpected immediate data (%d != %d)", wc.Imm, expImm)
	}
	fmt.Printf("The value '%d' was written together with immediate data '%d'\n", expImm, wc.Imm)
	return nil
}

// getWC waits for one completion of q.
func getWC(q *cq.CQ) (cq.WC, error) {
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err = q.Wait(ctx)
			cancel()
			if err != nil {
				return cq.WC{}, fmt.Errorf("cq.CQ.Wait: %w", err)
			}
			continue
		}
		if err != nil {
			return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		return wc[0], nil
	}
}

// nextEvent waits for the connection's next event.
func nextEvent(c *conn.Conn) (rpma.ConnEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return ev, fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	return ev, nil
}

// waitForCloseAndDisconnect mirrors common_wait_for_conn_close_and_disconnect:
// wait for RPMA_CONN_CLOSED, then disconnect (the deferred Close deletes).
func waitForCloseAndDisconnect(c *conn.Conn) error {
	ev, err := nextEvent(c)
	if err == nil && ev != rpma.ConnClosed {
		err = fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	}
	if e := c.Disconnect(); e != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Disconnect: %w", e))
	}
	return err
}

// cErr returns an error with the C example's message, verbatim.
func cErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
