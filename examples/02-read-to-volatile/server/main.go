// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/02-read-to-volatile/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 02-read-to-volatile, the Go port
// of librpma's examples/02-read-to-volatile/server.c: it exposes
// "Hello client!" in a DRAM memory region registered for remote reads,
// hands the region's descriptor to the client in the accept private data
// (common_data) and waits for the client to read it and hang up. It prints
// nothing. It is written with package session (Accept, WaitForHangup).
//
//	server <server_address> <port>
package main

import (
	"context"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/session"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port>\n")
	common.Exit(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// the message: "Hello client!" and its NUL, 14 bytes of DRAM registered
	// as the source of RDMA reads
	msg := append([]byte(common.HelloClientMsg), 0)
	src, closeSrc, err := common.RegDRAM(p, len(msg), mr.UsageReadSrc)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "message", closeSrc)
	copy(src.Bytes(), msg)

	// let the client in with the region (session.Accept sends its
	// descriptor in common_data); the client reads, then hangs up
	c, err := session.Accept(ctx, e, nil, src, peer.Cfg{})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)
	return session.WaitForHangup(ctx, c)
}
