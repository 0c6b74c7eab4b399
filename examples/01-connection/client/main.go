// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/01-connection/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 01-connection, the Go port of
// librpma's examples/01-connection/client.c: it connects, sending
// "Hello server!" as its private data, prints the private data the server
// accepted with, then waits for the server to hang up. A rejected
// connection (no server yet) is retried up to 10 times, 5 s apart.
//
//	client <addr> <port>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

func main() {
	common.Start(3, "usage: %s <addr> <port>\n")
	common.Exit(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	c, err := connect(p, addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)

	// the server's greeting
	fmt.Printf("Received a message: %s\n", common.CString(c.PrivateData()))

	// the server hangs up
	return common.WaitForCloseAndDisconnect(context.Background(), c)
}

// connect connects to addr:port with our greeting as private data, up to
// common.ConnectMaxRetry times while the server rejects the connection.
func connect(p *peer.Peer, addr, port string) (*conn.Conn, error) {
	pdata := append([]byte(common.HelloServerMsg), 0)
	for retry := 1; ; retry++ {
		c, ev, err := attempt(p, addr, port, pdata)
		if err != nil {
			return nil, err
		}
		switch ev {
		case rpma.ConnEstablished:
			return c, nil
		case rpma.ConnRejected:
			c.Close()
			if retry == common.ConnectMaxRetry {
				return nil, errors.New("the retry number exceeded. Closing")
			}
			fmt.Fprintln(os.Stderr, "Retrying...")
			time.Sleep(common.ConnectRetryDelay)
		default:
			c.Close()
			return nil, common.UnexpectedEvent(ev)
		}
	}
}

// attempt makes one connection request and returns its first event.
func attempt(p *peer.Peer, addr, port string, pdata []byte) (*conn.Conn, rpma.ConnEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()
	req, err := conn.NewRequest(ctx, p, addr, port, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("conn.NewRequest: %w", err)
	}
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, 0, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	ev, err := c.NextEvent(ctx)
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("conn.NextEvent: %w", err)
	}
	return c, ev, nil
}
