// Command client is the client of example 11-write-with-imm, the Go port of
// librpma's examples/11-write-with-imm/client.c.
//
//	client <server_address> <port> <imm>
//
// It takes the server's 1 KiB write destination from the private data
// (common_data), puts <imm> (a uint32) in the first 4 bytes of its own 1 KiB
// buffer and writes the buffer there with <imm> as immediate data
// ("Writing value '<imm>' with immediate data '<imm>'"). After the write's
// completion it disconnects.
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
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <imm>\n"

// timeout bounds every wait (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintf(os.Stderr, usage, os.Args[0])
		os.Exit(255)
	}
	// as every librpma example: the library's INFO messages on stderr
	rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	imm, err := common.ParseImm(os.Args[3])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(255)
	}
	if err := run(os.Args[1], os.Args[2], imm); err != nil {
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

func run(addr, port string, imm uint32) (err error) {
	// prepare memory
	srcBuf, err := pmem.Alloc(common.ImmMessageSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", srcBuf.Close)

	// lookup the device via the address and create a new peer using it
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextRemote)
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
	srcMR, err := mr.Reg(p, srcBuf.Bytes(), mr.UsageWriteSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", srcMR.Dereg)

	// establish a new connection to a server
	c, err := connect(p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)

	err = write(c, srcMR, srcBuf.Bytes(), imm)
	return errors.Join(err, disconnectAndWaitForClose(c))
}

// write writes the 1 KiB buffer, starting with imm, to the server's region
// with imm as immediate data, and waits for the completion.
func write(c *conn.Conn, srcMR *mr.Local, src []byte, imm uint32) error {
	// obtain the remote memory description
	pdata := c.PrivateData()
	if len(pdata) < common.CommonDataSize {
		return cErr("Received connection's private data is too small (%d < %d)", len(pdata), common.CommonDataSize)
	}
	data, err := common.DecodeCommonDataMROnly(pdata)
	if err != nil {
		return err
	}
	dst, err := mr.RemoteFromDescriptor(data.MRDesc)
	if err != nil {
		return fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}

	// write a message with immediate data to the server
	copy(src, common.EncodeWriteWithImm(imm))
	v, _ := common.DecodeImm(src)
	fmt.Printf("Writing value '%d' with immediate data '%d'\n", v, imm)
	if err := c.WriteWithImm(dst, int(data.DataOffset), srcMR, 0, common.ImmMessageSize,
		rpma.CompletionAlways, imm, 0); err != nil {
		return fmt.Errorf("conn.Conn.WriteWithImm: %w", err)
	}

	// wait for the completion and validate it
	var wc [1]cq.WC
	for {
		_, err := c.CQ().GetWC(wc[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err = c.CQ().Wait(ctx)
			cancel()
			if err != nil {
				return fmt.Errorf("cq.CQ.Wait: %w", err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		break
	}
	if wc[0].Status != rpma.WCSuccess {
		return cErr("Received unexpected completion: %s", wc[0].Status)
	}
	if wc[0].Opcode != rpma.WCRDMAWrite {
		return cErr("Received unexpected type of operation (%d != %d)", wc[0].Opcode, rpma.WCRDMAWrite)
	}
	return nil
}

// connect mirrors client_connect of librpma's common-conn.c: a connection
// request to addr:port, connected with pdata, which must get established.
func connect(p *peer.Peer, addr, port string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := conn.NewRequest(ctx, p, addr, port, cfg)
	if err != nil {
		return nil, fmt.Errorf("conn.NewRequest: %w", err)
	}
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	if err := expectEvent(c, rpma.ConnEstablished); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// expectEvent waits for the connection's next event, which must be want.
func expectEvent(c *conn.Conn, want rpma.ConnEvent) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	if ev != want {
		return fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	}
	return nil
}

// disconnectAndWaitForClose mirrors common_disconnect_and_wait_for_conn_close:
// disconnect, then wait for RPMA_CONN_CLOSED (the deferred Close deletes).
func disconnectAndWaitForClose(c *conn.Conn) error {
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Conn.Disconnect: %w", err)
	}
	return expectEvent(c, rpma.ConnClosed)
}

// cErr returns an error with the C example's message, verbatim.
func cErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
