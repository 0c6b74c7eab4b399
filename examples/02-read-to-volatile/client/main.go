// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/02-read-to-volatile/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 02-read-to-volatile, the Go port
// of librpma's examples/02-read-to-volatile/client.c: it connects, takes the
// server's memory region from the accept private data (common_data), reads
// all of it into a local DRAM buffer with one RDMA read and prints it.
// It is written with package session (session.Connect, WaitFor, Hangup),
// as a program of one's own would be.
//
//	client <server_address> <port>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port>\n")
	common.Exit(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	// the sink: 1 KiB of DRAM, registered as the destination of RDMA reads
	dst, closeDst, err := common.RegDRAM(p, common.Kilobyte, mr.UsageReadDst)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "sink", closeDst)

	// the connection, and the server's memory region from its private data
	c, src, err := session.Connect(ctx, p, addr, port, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)
	if src == nil {
		return errors.New("the server offered no memory region")
	}
	size := src.Size()
	if size > common.Kilobyte {
		return fmt.Errorf("remote memory region size too big to reading to the sink buffer of the assumed size (%d > %d)", size, common.Kilobyte)
	}

	// read all of it
	if err := c.Read(dst, 0, src, 0, int(size), rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Read: %w", err)
	}
	if _, err := session.WaitFor(ctx, c.CQ(), 0); err != nil {
		return err
	}

	fmt.Printf("Read a message: %s\n", common.CString(dst.Bytes()))

	return session.Hangup(ctx, c)
}
