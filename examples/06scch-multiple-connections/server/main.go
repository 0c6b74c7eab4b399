// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/06scch-multiple-connections/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 06scch-multiple-connections, the
// Go port of librpma's examples/06scch-multiple-connections/server.c: the
// server of 06-multiple-connections with a shared completion channel, so
// the completions of a connection are waited for on the connection
// (conn.Conn.Wait) rather than on its CQ. It serves up to 10 clients at a
// time; from each one's connection private data (common_data) it takes the
// memory region holding the client's name, reads the name with an RDMA
// read into the client's 32-byte slot of its own memory, prints it and
// hangs up. After 15 s without any event it says "Server timed out." and
// ends.
//
//	server <server_address> <port>
//
// The C server multiplexes the endpoint's, the connections' and the
// channels' file descriptors with epoll in one thread; this one gives each
// connection a goroutine (common.ServeClients).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port>\n")
	common.Exit(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// the names: one 32-byte slot per client, registered as the
	// destination of RDMA reads
	dst, closeDst, err := common.RegDRAM(p, common.MaxNameSize*common.ClientMax, mr.UsageReadDst)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "names", closeDst)

	fmt.Println("Today I have got in touch with:")

	// every connection gets a shared completion channel
	cfg := conn.DefaultConfig()
	cfg.SharedCompChannel = true

	// serve the clients until none has come for 15 s
	return common.ServeClients(e, cfg, common.Timeout15s, func(ctx context.Context, slot int, c *conn.Conn) error {
		return readName(ctx, c, dst, slot)
	})
}

// readName reads the name the client's private data points to into its
// slot of dst and prints it.
func readName(ctx context.Context, c *conn.Conn, dst *mr.Local, slot int) error {
	pdata := c.PrivateData()
	if len(pdata) < common.CommonDataSize {
		return fmt.Errorf("received connection's private data is too small (%d < %d)", len(pdata), common.CommonDataSize)
	}
	src, _, err := common.RemoteMR(pdata)
	if err != nil {
		return err
	}
	off := slot * common.MaxNameSize
	if err := c.Read(dst, off, src, 0, common.MaxNameSize, rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Read: %w", err)
	}
	// wait for the read's completion on the connection's shared channel
	if _, err := common.NewSharedChannel(c).WaitAndValidate(ctx, rpma.WCRDMARead, "rpma_read()"); err != nil {
		return err
	}

	fmt.Printf("- %s\n", common.CString(dst.Bytes()[off:off+common.MaxNameSize]))
	return nil
}
