// Command server is the server of example
// 08srq-simple-messages-ping-pong-with-srq, the Go port of librpma's
// examples/08srq-simple-messages-ping-pong-with-srq/server.c.
//
//	server <server_address> <port> [m|r]
//
// The server receives through a shared receive queue (SRQ). Where the
// receive completions arrive depends on the mode:
//
//	(none)  s: the SRQ's own receive CQ (the default)
//	m          the connection's main CQ (the SRQ has no receive CQ)
//	r          the connection's separate receive CQ (the SRQ has none)
//
// It posts a receive to the SRQ, accepts one connection and plays
// ping-pong: for each 8-byte counter the client sends ("Value received:
// N", which must come from the connection's QP) it posts the next receive
// and sends back N+1 ("Value sent: N+1"), not waiting for the send's
// completion. The client's I_M_DONE (2^64-1) ends the game; the server then
// disconnects without waiting.
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
	"github.com/gorpma/rpma/srq"
)

const usage = "usage: %s <server_address> <port> [m|r]\n"

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

	// the receive CQ mode: 's' unless the third parameter says m or r
	mode := byte('s')
	if len(os.Args) >= 4 {
		switch os.Args[3] {
		case "m", "r":
			mode = os.Args[3][0]
		default:
			fmt.Fprintf(os.Stderr, "The third parameter should be one of m or r (%s given)\n", os.Args[3])
			os.Exit(255)
		}
	}
	if err := run(os.Args[1], os.Args[2], mode); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(255) // the C example returns -1
	}
}

func run(addr, port string, mode byte) (err error) {
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

	// create the shared RQ: with its own receive CQ only in mode s
	srqCfg := srq.DefaultConfig()
	if mode != 's' {
		srqCfg.RCQSize = 0
	}
	s, err := srq.New(p, srqCfg)
	if err != nil {
		return fmt.Errorf("srq.New: %w", err)
	}
	defer closeLater(&err, "srq.SRQ.Close", s.Close)

	// the connection configuration: a separate receive CQ only in mode r
	cfg := conn.DefaultConfig()
	if mode == 'r' {
		cfg.RCQSize = common.RCQSize
	}
	cfg.SRQ = s

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

	// post an initial receive for the first message of the client's ping-pong
	if err := s.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
		return fmt.Errorf("srq.SRQ.Recv: %w", err)
	}

	// wait for an incoming connection request, accept it and wait for its
	// establishment
	c, err := accept(e, cfg, nil)
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)
	qpNum := c.QPNum()

	var rcq *cq.CQ
	switch mode {
	case 's':
		rcq = s.RCQ() // the receive CQ of the shared RQ
	case 'm':
		rcq = c.CQ() // the main CQ of the connection
	case 'r':
		rcq = c.RCQ() // the separate receive CQ of the connection
	}

	err = pingPong(c, s, rcq, recvBuf.Bytes(), sendBuf.Bytes(), recvMR, sendMR, recvCtx, qpNum)
	// disconnect the client without waiting for the connection to close
	if e := c.Disconnect(); e != nil && err == nil {
		err = fmt.Errorf("conn.Conn.Disconnect: %w", e)
	}
	return err
}

func pingPong(c *conn.Conn, s *srq.SRQ, rcq *cq.CQ, recv, send []byte,
	recvMR, sendMR *mr.Local, recvCtx uint64, qpNum uint32) error {
	for {
		wc, err := waitForRecv(rcq, recvCtx)
		if err != nil {
			return err
		}
		v, err := common.DecodeCounter(recv[:common.MsgSize])
		if err != nil {
			return err
		}
		if v == common.IMDone {
			return nil
		}
		if wc.QPNum != qpNum {
			return cErr("Error: number of QP (qp_num) in the received completion (%d) differs from the one of the connection (%d)",
				wc.QPNum, qpNum)
		}
		// print the received old value of the client's counter
		fmt.Printf("Value received: %d\n", v)
		next := common.EncodeCounter(v + 1)
		copy(send, next[:])

		// prepare a receive for the client's request
		if err := s.Recv(recvMR, 0, common.MsgSize, recvCtx); err != nil {
			return fmt.Errorf("srq.SRQ.Recv: %w", err)
		}
		// send the new value to the client, not waiting for the completion
		fmt.Printf("Value sent: %d\n", v+1)
		if err := c.Send(sendMR, 0, common.MsgSize, rpma.CompletionOnError, 0); err != nil {
			return fmt.Errorf("conn.Conn.Send: %w", err)
		}
	}
}

// waitForRecv waits for the next receive completion on rcq and validates it
// as validate_wc of librpma's common-messages-ping-pong.c does.
func waitForRecv(rcq *cq.CQ, recvCtx uint64) (cq.WC, error) {
	var wc [1]cq.WC
	for {
		n, err := rcq.GetWC(wc[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			// lack of completion is not an error: wait for one
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err = rcq.Wait(ctx)
			cancel()
			if err != nil {
				return cq.WC{}, fmt.Errorf("cq.CQ.Wait: %w", err)
			}
			continue
		}
		if err != nil {
			return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		if n == 0 {
			continue
		}
		if wc[0].Status != rpma.WCSuccess {
			fn := "recv"
			if wc[0].Opcode == rpma.WCSend {
				fn = "send"
			}
			return cq.WC{}, fmt.Errorf("rpma_%s() failed: %s", fn, wc[0].Status)
		}
		if wc[0].Opcode != rpma.WCRecv {
			continue // a send completion (mode m): not awaited
		}
		if wc[0].OpContext != recvCtx || wc[0].ByteLen != common.MsgSize {
			return cq.WC{}, fmt.Errorf("received completion is not as expected (0x%X != 0x%X [wc.wr_id] || %d != %d [wc.byte_len])",
				wc[0].OpContext, recvCtx, wc[0].ByteLen, common.MsgSize)
		}
		return wc[0], nil
	}
}

// accept mirrors server_accept_connection of librpma's common-conn.c: the
// next connection request, accepted with pdata, which must get established.
func accept(e *ep.Endpoint, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
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
		err = fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// cErr returns an error with the C example's message, verbatim.
func cErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
