// Command server is the server of example 12-receive-completion-queue, the
// Go port of librpma's examples/12-receive-completion-queue/server.c.
//
//	server <server_address> <port>
//
// As 08's server, but the connection has a separate receive CQ (RCQ): the
// receives complete there, the sends on the main CQ. For each 8-byte
// counter the client sends it prints "SERVER: Value received: N", posts
// the next receive, sends back N+1 ("SERVER: Value sent: N+1") and waits
// for that send's completion. The client's I_M_DONE (2^64-1) ends the
// game; the server then disconnects and waits for the connection to close.
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
		os.Exit(255) // the C example returns -1
	}
}

func run(addr, port string) (err error) {
	// prepare memory: separate 8-byte receive and send buffers
	recvBuf, err := pmem.Alloc(common.MsgSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", recvBuf.Close)
	sendBuf, err := pmem.Alloc(common.MsgSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", sendBuf.Close)

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

	// start a listening endpoint at addr:port
	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer closeLater(&err, "ep.Endpoint.Shutdown", e.Shutdown)

	// register the memory
	recvMR, err := mr.Reg(p, recvBuf.Bytes(), mr.UsageRecv)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", recvMR.Dereg)
	sendMR, err := mr.Reg(p, sendBuf.Bytes(), mr.UsageSend)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", sendMR.Dereg)
	recvCtx := recvMR.Addr()

	// a new connection configuration with a receive CQ
	cfg := conn.DefaultConfig()
	cfg.RCQSize = common.RCQSize

	// receive an incoming connection request
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	req, err := e.NextConnReq(ctx, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
	}
	// post an initial receive for the first message of the client's ping-pong
	if err := req.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Recv: %w", err)
	}
	// accept the connection request and obtain the connection object
	c, err := req.Connect(nil)
	if err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)
	if err := expectEvent(c, rpma.ConnEstablished); err != nil {
		return err
	}

	err = pingPong(c, recvBuf.Bytes(), sendBuf.Bytes(), recvMR, sendMR, recvCtx)
	return errors.Join(err, disconnectAndWaitForClose(c))
}

func pingPong(c *conn.Conn, recv, send []byte, recvMR, sendMR *mr.Local, recvCtx uint64) error {
	// the connection's main CQ and receive CQ
	q, rcq := c.CQ(), c.RCQ()
	for {
		// get one receive completion and validate it
		if err := getWCAndValidate(rcq, rpma.WCRecv, "rpma_recv()"); err != nil {
			return err
		}
		v, err := common.DecodeCounter(recv[:common.MsgSize])
		if err != nil {
			return err
		}
		if v == common.IMDone {
			return nil
		}
		// print the received old value of the client's counter
		fmt.Printf("SERVER: Value received: %d\n", v)
		next := common.EncodeCounter(v + 1)
		copy(send, next[:])

		// prepare a receive for the client's response
		if err := c.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
			return fmt.Errorf("conn.Conn.Recv: %w", err)
		}
		// send the new value to the client
		fmt.Printf("SERVER: Value sent: %d\n", v+1)
		if err := c.Send(sendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); err != nil {
			return fmt.Errorf("conn.Conn.Send: %w", err)
		}
		// get one send completion and validate it
		if err := getWCAndValidate(q, rpma.WCSend, "rpma_send()"); err != nil {
			return err
		}
	}
}

// getWCAndValidate mirrors get_wc_and_validate of librpma's
// receive-completion-queue-common.c: it gets one completion from q
// (waiting for it if there is none yet) and checks its status and opcode.
func getWCAndValidate(q *cq.CQ, opcode rpma.WCOpcode, fn string) error {
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err = q.Wait(ctx)
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
		return fmt.Errorf("%s failed: %s", fn, wc[0].Status)
	}
	if wc[0].Opcode != opcode {
		return fmt.Errorf("unexpected wc.opcode value (0x%X != 0x%X)", uint32(wc[0].Opcode), uint32(opcode))
	}
	return nil
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

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
