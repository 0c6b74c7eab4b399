// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/12-receive-completion-queue/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

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
// waits for the server to close the connection, and disconnects.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <start_value> <rounds> [<sleep>]\n"

func main() {
	common.Start(5, usage)
	common.Exit(run(os.Args[1], os.Args[2], common.StrtoulArg(3), common.StrtoulArg(4), common.StrtoulArg(5)))
}

func run(addr, port string, counter, rounds, sleep uint64) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// lookup the device via the address and create a new peer using it
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

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

	// establish a new connection to a server listening at addr:port
	c, err := common.ClientConnect(ctx, p, addr, port, cfg, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)
	// the connection's main CQ and receive CQ
	q, rcq := c.CQ(), c.RCQ()

	for rounds--; rounds != 0; rounds-- {
		// prepare a receive for the server's response
		if err = c.Recv(msg.RecvMR, 0, common.MsgSize, msg.RecvCtx); err != nil {
			err = fmt.Errorf("conn.Conn.Recv: %w", err)
			break
		}
		// send a message to the server
		fmt.Printf("CLIENT: Value sent: %d\n", counter)
		msg.PutCounter(0, counter)
		if err = c.Send(msg.SendMR, 0, common.MsgSize, rpma.CompletionAlways, 0); err != nil {
			err = fmt.Errorf("conn.Conn.Send: %w", err)
			break
		}
		// get one send completion and validate it
		if _, err = common.WaitAndValidate(ctx, q, rpma.WCSend, "rpma_send()", common.OpcodeMsgHex); err != nil {
			break
		}
		// get one receive completion and validate it
		if _, err = common.WaitAndValidate(ctx, rcq, rpma.WCRecv, "rpma_recv()", common.OpcodeMsgHex); err != nil {
			break
		}
		// copy the new value of the counter and print it out
		if counter, err = msg.Counter(0); err != nil {
			break
		}
		fmt.Printf("CLIENT: Value received: %d\n", counter)
		if sleep > 0 {
			time.Sleep(time.Duration(sleep) * time.Microsecond)
		}
	}

	// Send the I_M_DONE message, with a completion on error only, as
	// librpma's client does; then wait for the server to hang up (it does
	// on I_M_DONE, so its CLOSED shows that the message arrived) before
	// disconnecting. librpma's client disconnects at once, and waiting for
	// the send's completion instead races with the server's disconnect:
	// rxe completes the server's receive before it acknowledges the send,
	// and a server quick to disconnect leaves the send unacknowledged.
	msg.PutCounter(0, common.IMDone)
	if e := c.Send(msg.SendMR, 0, common.MsgSize, rpma.CompletionOnError, 0); e != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Send: %w", e))
	}
	return errors.Join(err, common.WaitForCloseAndDisconnect(ctx, c))
}
