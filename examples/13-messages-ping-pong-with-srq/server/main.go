// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2022, Intel Corporation
// Copyright 2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/13-messages-ping-pong-with-srq/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 13-messages-ping-pong-with-srq,
// the Go port of librpma's examples/13-messages-ping-pong-with-srq/server.c.
//
//	server <server_address> <port> [<timeout>]
//
// The server receives from up to 10 clients through one shared receive
// queue (SRQ) with its own receive CQ. It accepts connections until none
// has come for <timeout> seconds (default 5), printing "The client #N has
// been connected." for each and posting one 8-byte receive per client, then
// prints "Server ended listening." and plays ping-pong with all of them at
// once: each counter N that arrives ("[server] value received: N from the
// connection [qp#Q]", the connection told by the completion's QP number)
// is answered with N+1 on that connection ("[server] value sent: ...")
// from the same slot of the send buffer, until every client has sent
// I_M_DONE (2^64-1). Then it disconnects all clients without waiting.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

const usage = "usage: %s <server_address> <port> [<timeout>]\n"

func main() {
	common.Start(3, usage)

	window := common.Timeout5s
	if len(os.Args) >= 4 {
		s := atoi(os.Args[3])
		if s <= 0 {
			fmt.Fprintf(os.Stderr, "<timeout> should be a positive number of seconds (%s given)\n", os.Args[3])
			os.Exit(255)
		}
		window = time.Duration(s) * time.Second
	}
	common.Exit(run(os.Args[1], os.Args[2], window))
}

// atoi mirrors atoi(3) for the <timeout> argument: optional white space and
// sign, then the leading decimal digits ("abc" is 0, "3s" is 3).
func atoi(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < 1<<40 { // saturate long before overflowing
			n = n*10 + int64(s[i]-'0')
		}
	}
	if neg {
		return -n
	}
	return n
}

// client is one connected client: its connection and its QP number.
type client struct {
	c     *conn.Conn
	qpNum uint32
}

func run(addr, port string, window time.Duration) (err error) {
	// a peer on the device of addr, and a listening endpoint at addr:port
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// create a shared RQ object (with its own receive CQ)
	s, err := srq.New(p, nil)
	if err != nil {
		return fmt.Errorf("srq.New: %w", err)
	}
	defer common.CloseWith(&err, "srq.SRQ.Close", s.Close)

	// a connection configuration with the shared RQ
	cfg := conn.DefaultConfig()
	cfg.SRQ = s

	// the messages: one 8-byte receive slot and send slot per client,
	// registered for receiving and for sending
	msg, err := common.NewMessageBuffers(p, common.ClientMax*common.MsgSize)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "message buffers", msg.Close)

	// disconnect all clients at the end, without waiting
	var clients []client
	defer func() {
		for _, cl := range clients {
			cl.c.Disconnect()
			common.CloseWith(&err, "conn.Conn.Close", cl.c.Close)
		}
	}()

	// accept connections until none comes within the listening window
	for {
		c, err := acceptNext(e, cfg, s, msg, len(clients), window)
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			return err
		}
		clients = append(clients, client{c: c, qpNum: c.QPNum()})
		fmt.Printf("The client #%d has been connected.\n", len(clients))
	}
	fmt.Printf("Server ended listening.\n")

	return pingPong(clients, s, msg)
}

// acceptNext waits for the next connection request for at most window and
// accepts it with a receive posted for it in slot i.
func acceptNext(e *ep.Endpoint, cfg *conn.Config, s *srq.SRQ, msg *common.MessageBuffers, i int, window time.Duration) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), window)
	req, err := e.NextConnReq(ctx, cfg)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
	}
	if i >= common.ClientMax {
		req.Reject()
		return nil, common.CError("No free slot for a new connection request.")
	}
	// post an initial receive for the first message of the client's ping-pong;
	// its op context is the address of its slot, as in C
	off := common.SlotOffset(i)
	if err := s.Recv(msg.RecvMR, off, common.MsgSize, msg.RecvCtx+uint64(off)); err != nil {
		req.Close()
		return nil, fmt.Errorf("srq.SRQ.Recv: %w", err)
	}
	// accept the connection request and wait for its establishment
	return common.Establish(context.Background(), req, nil)
}

// pingPong answers the counters of all clients until each has sent I_M_DONE.
func pingPong(clients []client, s *srq.SRQ, msg *common.MessageBuffers) error {
	rcq := s.RCQ() // the receive CQ of the shared RQ
	wcs := make([]cq.WC, max(len(clients), 1))
	done := 0
	for done < len(clients) {
		n, err := rcq.GetWC(wcs)
		if errors.Is(err, rpma.ErrNoCompletion) {
			// lack of completion is not an error: wait for one
			ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
			err = rcq.Wait(ctx)
			cancel()
			if err != nil {
				return errors.Join(fmt.Errorf("cq.CQ.Wait: %w", err),
					common.CError("Unable to receive data from all connections"))
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		// validate received completions
		for _, wc := range wcs[:n] {
			if wc.Status != rpma.WCSuccess {
				return fmt.Errorf("rpma_srq_recv() failed: %s", wc.Status)
			}
			if wc.Opcode != rpma.WCRecv {
				return fmt.Errorf("received unexpected wc.opcode value (%d != %d)", wc.Opcode, rpma.WCRecv)
			}
			cl, err := findQP(clients, wc.QPNum)
			if err != nil {
				return err
			}
			// the slot the message landed in: any posted one
			slot := (wc.OpContext - msg.RecvCtx) / common.MsgSize
			if slot >= common.ClientMax {
				return fmt.Errorf("receive completion of an unknown slot (op context 0x%X)", wc.OpContext)
			}
			off := common.SlotOffset(int(slot))
			v, err := msg.Counter(off)
			if err != nil {
				return err
			}
			if v == common.IMDone {
				done++
				continue
			}
			fmt.Printf("[server] value received: %d from the connection [qp#%d]\n", v, cl.qpNum)

			// prepare a receive for the next message, in the same slot
			if err := s.Recv(msg.RecvMR, off, common.MsgSize, wc.OpContext); err != nil {
				return fmt.Errorf("srq.SRQ.Recv: %w", err)
			}
			msg.PutCounter(off, v+1)
			fmt.Printf("[server] value sent: %d from the connection [qp#%d]\n", v+1, cl.qpNum)

			if err := cl.c.Send(msg.SendMR, off, common.MsgSize, rpma.CompletionOnError, 0); err != nil {
				return fmt.Errorf("conn.Conn.Send: %w", err)
			}
		}
	}
	return nil
}

// findQP returns the client whose connection has QP number qpNum.
func findQP(clients []client, qpNum uint32) (client, error) {
	for _, cl := range clients {
		if cl.qpNum == qpNum {
			return cl, nil
		}
	}
	return client{}, common.CError("Unable to find the connection [qp#%d]", qpNum)
}
