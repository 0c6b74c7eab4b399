// Command client is the client of example 12-receive-completion-queue, the
// Go port of librpma's examples/12-receive-completion-queue/client.c.
//
//	client <server_address> <port> <start_value> <rounds> [<sleep>]
//
// As 08's client, but the connection has a separate receive CQ (RCQ): the
// client waits for its send's completion on the main CQ, then for the
// server's answer on the RCQ. It sends the 8-byte counter <start_value>
// ("CLIENT: Value sent: N"), receives N+1 ("CLIENT: Value received: N+1")
// and sends that back, rounds-1 times (while (--rounds)), sleeping <sleep>
// microseconds after each exchange. Then it sends I_M_DONE (2^64-1),
// waits for that send's completion, disconnects and waits for the
// connection to close.
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

const usage = "usage: %s <server_address> <port> <start_value> <rounds> [<sleep>]\n"

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
	recvCtx := recvMR.Addr()

	// a new connection configuration with a receive CQ
	cfg := conn.DefaultConfig()
	cfg.RCQSize = common.RCQSize

	// establish a new connection to a server listening at addr:port
	c, err := connect(p, addr, port, cfg, nil)
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)
	// the connection's main CQ and receive CQ
	q, rcq := c.CQ(), c.RCQ()

	recv, send := recvBuf.Bytes(), sendBuf.Bytes()
	for rounds--; rounds != 0; rounds-- {
		// prepare a receive for the server's response
		if err = c.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
			err = fmt.Errorf("conn.Conn.Recv: %w", err)
			break
		}
		// send a message to the server
		fmt.Printf("CLIENT: Value sent: %d\n", counter)
		msg := common.EncodeCounter(counter)
		copy(send, msg[:])
		if err = c.Send(sendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); err != nil {
			err = fmt.Errorf("conn.Conn.Send: %w", err)
			break
		}
		// get one send completion and validate it
		if err = getWCAndValidate(q, rpma.WCSend, "rpma_send()"); err != nil {
			break
		}
		// get one receive completion and validate it
		if err = getWCAndValidate(rcq, rpma.WCRecv, "rpma_recv()"); err != nil {
			break
		}
		// copy the new value of the counter and print it out
		if counter, err = common.DecodeCounter(recv[:common.MsgSize]); err != nil {
			break
		}
		fmt.Printf("CLIENT: Value received: %d\n", counter)
		if sleep > 0 {
			time.Sleep(time.Duration(sleep) * time.Microsecond)
		}
	}

	// Send the I_M_DONE message. librpma's client posts it with
	// RPMA_F_COMPLETION_ON_ERROR and disconnects at once; but
	// rdma_disconnect moves the QP to the error state, which can flush the
	// send before it leaves (seen on rxe), so wait for its completion.
	done := common.EncodeCounter(common.IMDone)
	copy(send, done[:])
	if e := c.Send(sendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); e != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Send: %w", e))
	} else if e := getWCAndValidate(q, rpma.WCSend, "rpma_send()"); e != nil {
		err = errors.Join(err, e)
	}
	return errors.Join(err, disconnectAndWaitForClose(c))
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

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
