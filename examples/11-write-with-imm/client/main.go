// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2021-2022, Intel Corporation
// Copyright (c) 2021 Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/11-write-with-imm/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 11-write-with-imm, the Go port of
// librpma's examples/11-write-with-imm/client.c.
//
//	client <server_address> <port> <imm>
//
// It takes the server's 1 KiB write destination from the private data
// (common_data), puts <imm> (a uint32) in the first 4 bytes of its own 1 KiB
// buffer and writes the buffer there with <imm> as immediate data
// ("Writing value '<imm>' with immediate data '<imm>'"). After the write's
// completion it disconnects.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <imm>\n"

func main() {
	common.Start(4, usage)

	imm, err := common.ParseImm(os.Args[3])
	common.Exit(err)
	common.ExitRPMA(run(os.Args[1], os.Args[2], imm))
}

func run(addr, port string, imm uint32) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// lookup the device via the address and create a new peer using it
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	// prepare memory: 1 KiB, the source of the RDMA write
	srcMR, closeSrc, err := common.RegDRAM(p, common.ImmMessageSize, mr.UsageWriteSrc)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "write source", closeSrc)

	// establish a new connection to a server
	c, err := common.ClientConnect(ctx, p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)

	err = write(ctx, c, srcMR, imm)
	return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
}

// write writes the 1 KiB buffer, starting with imm, to the server's region
// with imm as immediate data, and waits for the completion.
func write(ctx context.Context, c *conn.Conn, srcMR *mr.Local, imm uint32) error {
	// obtain the remote memory description
	dst, dstOffset, err := common.RemoteMR(c.PrivateData())
	if err != nil {
		return err
	}

	// write a message with immediate data to the server
	copy(srcMR.Bytes(), common.EncodeWriteWithImm(imm))
	v, _ := common.DecodeImm(srcMR.Bytes())
	fmt.Printf("Writing value '%d' with immediate data '%d'\n", v, imm)
	if err := c.WriteWithImm(dst, dstOffset, srcMR, 0, common.ImmMessageSize,
		rpma.CompletionAlways, imm, 0); err != nil {
		return fmt.Errorf("conn.Conn.WriteWithImm: %w", err)
	}

	// wait for the completion and validate it
	wc, err := common.WaitForCompletion(ctx, c.CQ())
	if err != nil {
		return err
	}
	return common.ValidateImmWC(wc, rpma.WCRDMAWrite)
}
