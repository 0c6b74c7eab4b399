// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/12-receive-completion-queue/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

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

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port>\n"

func main() {
	common.Start(3, usage)
	common.Exit(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// a peer on the device of addr, and a listening endpoint at addr:port
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// the messages: separate 8-byte receive and send buffers, registered
	// for receiving and for sending
	msg, err := common.NewMessageBuffers(p, common.MsgSize)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "message buffers", msg.Close)

	// a new connection configuration with a receive CQ
	cfg := conn.DefaultConfig()
	cfg.RCQSize = common.RCQSize

	// receive an incoming connection request, post an initial receive for
	// the first message of the client's ping-pong, accept the request and
	// wait for the connection to be established
	c, err := common.ServerAcceptPrepared(ctx, e, cfg, nil, func(req *conn.ConnReq) error {
		return req.Recv(msg.RecvMR, 0, common.MsgSize, msg.RecvCtx)
	})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)

	err = pingPong(ctx, c, msg)
	return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
}

func pingPong(ctx context.Context, c *conn.Conn, msg *common.MessageBuffers) error {
	// the connection's main CQ and receive CQ
	q, rcq := c.CQ(), c.RCQ()
	for {
		// get one receive completion and validate it
		if _, err := common.WaitAndValidate(ctx, rcq, rpma.WCRecv, "rpma_recv()", common.OpcodeMsgHex); err != nil {
			return err
		}
		v, err := msg.Counter(0)
		if err != nil {
			return err
		}
		if v == common.IMDone {
			return nil
		}
		// print the received old value of the client's counter
		fmt.Printf("SERVER: Value received: %d\n", v)
		msg.PutCounter(0, v+1)

		// prepare a receive for the client's response
		if err := c.Recv(msg.RecvMR, 0, common.MsgSize, msg.RecvCtx); err != nil {
			return fmt.Errorf("conn.Conn.Recv: %w", err)
		}
		// send the new value to the client
		fmt.Printf("SERVER: Value sent: %d\n", v+1)
		if err := c.Send(msg.SendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); err != nil {
			return fmt.Errorf("conn.Conn.Send: %w", err)
		}
		// get one send completion and validate it
		if _, err := common.WaitAndValidate(ctx, q, rpma.WCSend, "rpma_send()", common.OpcodeMsgHex); err != nil {
			return err
		}
	}
}
