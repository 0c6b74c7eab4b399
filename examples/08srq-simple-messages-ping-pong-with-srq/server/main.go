// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2022, Intel Corporation
// Copyright (c) 2022 Fujitsu Limited
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/08srq-simple-messages-ping-pong-with-srq/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

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
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

const usage = "usage: %s <server_address> <port> [m|r]\n"

func main() {
	common.Start(3, usage)

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
	common.Exit(run(os.Args[1], os.Args[2], mode))
}

func run(addr, port string, mode byte) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// a peer on the device of addr, and a listening endpoint at addr:port
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// create the shared RQ: with its own receive CQ only in mode s
	srqCfg := srq.DefaultConfig()
	if mode != 's' {
		srqCfg.RCQSize = srq.NoRCQ
	}
	s, err := srq.New(p, srqCfg)
	if err != nil {
		return fmt.Errorf("srq.New: %w", err)
	}
	defer common.CloseWith(&err, "srq.SRQ.Close", s.Close)

	// the connection configuration: a separate receive CQ only in mode r
	cfg := conn.DefaultConfig()
	if mode == 'r' {
		cfg.RCQSize = common.RCQSize
	}
	cfg.SRQ = s

	// the messages: separate 8-byte receive and send buffers, registered
	// for receiving and for sending
	msg, err := common.NewMessageBuffers(p, common.MsgSize)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "message buffers", msg.Close)

	// post an initial receive for the first message of the client's ping-pong
	if err := s.Recv(msg.RecvMR, 0, common.MsgSize, msg.RecvCtx); err != nil {
		return fmt.Errorf("srq.SRQ.Recv: %w", err)
	}

	// wait for an incoming connection request, accept it and wait for its
	// establishment
	c, err := common.ServerAccept(ctx, e, cfg, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)
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

	err = pingPong(ctx, c, s, rcq, msg, qpNum)
	// disconnect the client without waiting for the connection to close
	if derr := c.Disconnect(); derr != nil && err == nil {
		err = fmt.Errorf("conn.Conn.Disconnect: %w", derr)
	}
	return err
}

func pingPong(ctx context.Context, c *conn.Conn, s *srq.SRQ, rcq *cq.CQ, msg *common.MessageBuffers, qpNum uint32) error {
	for {
		wc, err := waitForRecv(ctx, rcq, msg.RecvCtx)
		if err != nil {
			return err
		}
		v, err := msg.Counter(0)
		if err != nil {
			return err
		}
		if v == common.IMDone {
			return nil
		}
		if wc.QPNum != qpNum {
			return common.CError("Error: number of QP (qp_num) in the received completion (%d) differs from the one of the connection (%d)",
				wc.QPNum, qpNum)
		}
		// print the received old value of the client's counter
		fmt.Printf("Value received: %d\n", v)
		msg.PutCounter(0, v+1)

		// prepare a receive for the client's request
		if err := s.Recv(msg.RecvMR, 0, common.MsgSize, msg.RecvCtx); err != nil {
			return fmt.Errorf("srq.SRQ.Recv: %w", err)
		}
		// send the new value to the client, not waiting for the completion
		fmt.Printf("Value sent: %d\n", v+1)
		if err := c.Send(msg.SendMR, 0, common.MsgSize, rpma.CompletionOnError, 0); err != nil {
			return fmt.Errorf("conn.Conn.Send: %w", err)
		}
	}
}

// waitForRecv waits for the next receive completion on rcq, validated as
// validate_wc of librpma's common-messages-ping-pong.c does; a send
// completion (mode m) met on the way is not awaited.
func waitForRecv(ctx context.Context, rcq *cq.CQ, recvCtx uint64) (cq.WC, error) {
	for {
		wc, err := common.WaitForCompletion(ctx, rcq)
		if err != nil {
			return cq.WC{}, err
		}
		if _, recv, err := common.ValidateMessageWC(wc, recvCtx); err != nil || recv {
			return wc, err
		}
	}
}
