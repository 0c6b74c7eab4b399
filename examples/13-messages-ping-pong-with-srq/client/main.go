// Command client is the client of example 13-messages-ping-pong-with-srq,
// the Go port of librpma's examples/13-messages-ping-pong-with-srq/client.c.
//
//	client <server_address> <port> <seed> <rounds> [<sleep>]
//
// As 08srq's client, with the process id in every line: it sends the
// 8-byte counter <seed> ("[client #PID] value sent: N") and waits for the
// answer ("[client #PID] value received: N+1"), which it sends back in the
// next round, <rounds> times (do { } while (--rounds)), sleeping <sleep>
// microseconds after each exchange. Then it sends I_M_DONE (2^64-1) and
// waits for the server to close the connection. The server answers only
// once its listening window has closed, so the first exchange waits for
// that.
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

const usage = "usage: %s <server_address> <port> <seed> <rounds> [<sleep>]\n"

// timeout bounds every wait (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintf(os.Stderr, usage, os.Args[0])
		os.Exit(255)
	}
	// as every librpma example: the library's INFO messages on stderr
	rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(255) // the C example returns -1
	}
}

func run(args []string) (err error) {
	addr, port := args[0], args[1]
	counter, err := common.StrtoulNoError(args[2])
	if err != nil {
		return err
	}
	rounds, err := common.StrtoulNoError(args[3])
	if err != nil {
		return err
	}
	var sleep uint64
	if len(args) >= 5 {
		if sleep, err = common.StrtoulNoError(args[4]); err != nil {
			return err
		}
	}

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

	// establish a new connection to a server listening at addr:port
	c, err := connect(p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)

	pid := os.Getpid()
	recv, send := recvBuf.Bytes(), sendBuf.Bytes()
	for {
		// prepare a receive for the server's response
		if err = c.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
			err = fmt.Errorf("conn.Conn.Recv: %w", err)
			break
		}
		// send a message to the server
		fmt.Printf("[client #%d] value sent: %d\n", pid, counter)
		msg := common.EncodeCounter(counter)
		copy(send, msg[:])
		if err = c.Send(sendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); err != nil {
			err = fmt.Errorf("conn.Conn.Send: %w", err)
			break
		}
		if err = waitAndProcessCompletions(c.CQ(), recvCtx); err != nil {
			break
		}
		// copy the new value of the counter and print it out
		if counter, err = common.DecodeCounter(recv[:common.MsgSize]); err != nil {
			break
		}
		fmt.Printf("[client #%d] value received: %d\n", pid, counter)
		if sleep > 0 {
			time.Sleep(time.Duration(sleep) * time.Microsecond)
		}
		if rounds--; rounds == 0 {
			break
		}
	}

	if err == nil {
		// send the I_M_DONE message (its completion comes only on error)
		done := common.EncodeCounter(common.IMDone)
		copy(send, done[:])
		if err = c.Send(sendMR, 0, common.MsgSize, rpma.CompletionOnError, 0); err != nil {
			err = fmt.Errorf("conn.Conn.Send: %w", err)
		}
	}
	// the server hangs up
	return errors.Join(err, waitForCloseAndDisconnect(c))
}

// waitAndProcessCompletions mirrors wait_and_process_completions of
// librpma's common-messages-ping-pong.c: it collects completions (at most
// MAX_N_WC at a time) until it has seen the send and one receive, which
// must carry recvCtx and exactly 8 bytes.
func waitAndProcessCompletions(q *cq.CQ, recvCtx uint64) error {
	var wcs [common.MaxNWC]cq.WC
	sendDone, recvDone := false, false
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

// waitForCloseAndDisconnect mirrors common_wait_for_conn_close_and_disconnect:
// wait for RPMA_CONN_CLOSED, then disconnect (the deferred Close deletes).
func waitForCloseAndDisconnect(c *conn.Conn) error {
	err := expectEvent(c, rpma.ConnClosed)
	if e := c.Disconnect(); e != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Disconnect: %w", e))
	}
	return err
}

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
