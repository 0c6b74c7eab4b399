// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2021-2022, Intel Corporation
// Copyright (c) 2020-2021 Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/10-send-with-imm/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 10-send-with-imm, the Go port of
// librpma's examples/10-send-with-imm/server.c.
//
//	server <server_address> <port>
//
// It posts a 1 KiB receive, accepts one connection and reads the expected
// immediate value from the client's private data (a 4-byte host-order
// uint32). The client's send with immediate data must complete the
// receive with IBV_WC_WITH_IMM and that value; the server prints
// "Received value '<word>' with immediate data '<imm>'" (an empty word for a
// 0-byte send) and waits for the client to disconnect.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port>\n"

func main() {
	common.Start(3, usage)
	common.ExitRPMA(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	// a peer on the device of addr, and a listening endpoint at addr:port
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// prepare memory: 1 KiB to receive into
	recvMR, closeRecv, err := common.RegDRAM(p, common.Kilobyte, mr.UsageRecv)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "receive buffer", closeRecv)

	// receive an incoming connection request (10's server.c spells out
	// server_accept_connection, to post a receive first)
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()
	req, err := e.NextConnReq(ctx, nil)
	if err != nil {
		return fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
	}
	// prepare to receive a message with immediate data from the client
	if err := req.Recv(recvMR, 0, common.Kilobyte, 0); err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Recv: %w", err)
	}
	// accept the connection request and obtain the connection object
	c, err := req.Connect(nil)
	if err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)
	// wait for the connection to be established
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	if ev != rpma.ConnEstablished {
		return fmt.Errorf("rpma_conn_next_event() returned an unexpected event: %s", ev)
	}

	// the helpers bound every further wait by common.Timeout
	err = receive(context.Background(), c, recvMR.Bytes())
	return errors.Join(err, common.WaitForCloseAndDisconnect(context.Background(), c))
}

// receive checks the receive completion against the immediate value the
// client announced in its private data and prints what arrived.
func receive(ctx context.Context, c *conn.Conn, recv []byte) error {
	// get the expected immediate data from the connection's private data
	pdata := c.PrivateData()
	expImm, err := common.DecodeImm(pdata)
	if err != nil {
		return common.CError("Received connection's private data is too small (%d < %d)", len(pdata), common.ImmPrivateDataSize)
	}

	// wait for the completion and validate it
	wc, err := common.WaitForCompletion(ctx, c.CQ())
	if err != nil {
		return err
	}
	if err := common.ValidateImmWC(wc, rpma.WCRecv); err != nil {
		return err
	}
	if wc.Flags&cq.WithImm == 0 {
		return common.CError("Received unexpected completion flag (no IBV_WC_WITH_IMM)")
	}
	if wc.Imm != expImm {
		return common.CError("Received unexpected immediate data (%d != %d)", wc.Imm, expImm)
	}
	if wc.ByteLen == 0 {
		recv[0] = 0
	}
	fmt.Printf("Received value '%s' with immediate data '%d'\n", common.CString(recv), wc.Imm)
	return nil
}
