// Command client is the client of example 12scch-receive-completion-queue, the
// Go port of librpma's examples/12scch-receive-completion-queue/client.c.
//
//	client <server_address> <port> <start_value> <rounds> [<sleep>]
//
// As 12's client, but the connection's main CQ and receive CQ share one
// completion channel: the client waits with rpma_conn_wait on the
// connection for its send's completion, then for the server's answer. It sends the 8-byte counter <start_value>
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
	"slices"
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
	// CQ and RCQ share one completion channel
	cfg.SharedCompChannel = true

	// establish a new connection to a server listening at addr:port
	c, err := connect(p, addr, port, cfg, nil)
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)
	w := &completions{c: c}

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
		if _, err = w.waitAndValidate(rpma.WCSend, "rpma_send()"); err != nil {
			break
		}
		// get one receive completion and validate it
		if _, err = w.waitAndValidate(rpma.WCRecv, "rpma_recv()"); err != nil {
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
	} else if _, e := w.waitAndValidate(rpma.WCSend, "rpma_send()"); e != nil {
		err = errors.Join(err, e)
	}
	return errors.Join(err, disconnectAndWaitForClose(c))
}

// completions waits for the completions of a connection whose CQ and RCQ
// share one completion channel (Config.SharedCompChannel), as
// wait_and_validate_completion of librpma's 12scch example does with
// rpma_conn_wait and rpma_cq_get_wc. rpma_conn_wait reports whichever CQ
// got the next event; completions of the other kind that arrive first are
// kept until asked for.
type completions struct {
	c       *conn.Conn
	pending []cq.WC
}

// waitAndValidate returns the next completion with opcode, after checking
// its status; fn names the operation in the error message.
func (w *completions) waitAndValidate(opcode rpma.WCOpcode, fn string) (cq.WC, error) {
	for {
		for i, wc := range w.pending {
			if wc.Status != rpma.WCSuccess {
				return wc, fmt.Errorf("%s failed: %s", fn, wc.Status)
			}
			if wc.Opcode == opcode {
				w.pending = slices.Delete(w.pending, i, i+1)
				return wc, nil
			}
		}
		// wait for the next completion event of either CQ ...
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		q, _, err := w.c.Wait(ctx)
		cancel()
		if err != nil {
			return cq.WC{}, fmt.Errorf("conn.Conn.Wait: %w", err)
		}
		// ... and collect all the completions of the CQ that got it
		var wcs [2]cq.WC
		for {
			n, err := q.GetWC(wcs[:])
			if errors.Is(err, rpma.ErrNoCompletion) {
				break
			}
			if err != nil {
				return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
			}
			w.pending = append(w.pending, wcs[:n]...)
		}
	}
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
