// Command server is the server of example 08-messages-ping-pong, the Go
// port of librpma's examples/08-messages-ping-pong/server.c.
//
//	server <server_address> <port>
//
// It accepts one connection with a receive already posted, then plays
// ping-pong: for each 8-byte counter the client sends it prints
// "Value received: N", posts the next receive and sends back N+1
// ("Value sent: N+1"). The client's I_M_DONE (2^64-1) ends the game; the
// server then disconnects and waits for the connection to close.
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
	// the receive's op context is the receive buffer's address, as in C
	recvCtx := recvMR.Addr()

	// receive an incoming connection request
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	req, err := e.NextConnReq(ctx, nil)
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

// pingPong answers every counter the client sends with the counter plus one,
// until I_M_DONE arrives.
func pingPong(c *conn.Conn, recv, send []byte, recvMR, sendMR *mr.Local, recvCtx uint64) error {
	// the send completion of the first round is not there
	sendDone := true
	for {
		if err := waitAndProcessCompletions(c.CQ(), recvCtx, sendDone); err != nil {
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
		fmt.Printf("Value received: %d\n", v)

		// calculate a new counter's value
		next := common.EncodeCounter(v + 1)
		copy(send, next[:])

		// prepare a receive for the client's response
		if err := c.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
			return fmt.Errorf("conn.Conn.Recv: %w", err)
		}
		// send the new value to the client
		fmt.Printf("Value sent: %d\n", v+1)
		if err := c.Send(sendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); err != nil {
			return fmt.Errorf("conn.Conn.Send: %w", err)
		}
		sendDone = false
	}
}

// waitAndProcessCompletions mirrors wait_and_process_completions of
// librpma's common-messages-ping-pong.c: it collects completions (at most
// MAX_N_WC at a time) until it has seen the send (unless sendDone already)
// and one receive, which must carry recvCtx and exactly 8 bytes.
func waitAndProcessCompletions(q *cq.CQ, recvCtx uint64, sendDone bool) error {
	var wcs [common.MaxNWC]cq.WC
	recvDone := false
	for !sendDone || !recvDone {
		n, err := q.GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			// lack of completions is not an error here: wait for more
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
		for _, wc := range wcs[:n] {
			if wc.Status != rpma.WCSuccess {
				fn := "recv"
				if wc.Opcode == rpma.WCSend {
					fn = "send"
				}
				return fmt.Errorf("rpma_%s() failed: %s", fn, wc.Status)
			}
			switch wc.Opcode {
			case rpma.WCSend:
				sendDone = true
			case rpma.WCRecv:
				if wc.OpContext != recvCtx || wc.ByteLen != common.MsgSize {
					return fmt.Errorf("received completion is not as expected (0x%X != 0x%X [wc.wr_id] || %d != %d [wc.byte_len])",
						wc.OpContext, recvCtx, wc.ByteLen, common.MsgSize)
				}
				recvDone = true
			}
		}
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
