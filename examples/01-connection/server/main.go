// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/01-connection/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 01-connection, the Go port of
// librpma's examples/01-connection/server.c: it accepts one connection,
// sending "Hello client!" as its private data, prints the private data the
// client sent, then disconnects.
//
//	server <addr> <port>
//
// Its client is ../client; either side interoperates with librpma's C one.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
)

func main() {
	common.Start(3, "usage: %s <addr> <port>\n")
	common.Exit(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	_, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// wait for a connection request and accept it with our greeting
	c, err := common.ServerAccept(ctx, e, nil, append([]byte(common.HelloClientMsg), 0))
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)

	// the client's greeting
	if pdata := c.PrivateData(); pdata == nil {
		fmt.Println("No message received")
	} else {
		fmt.Printf("Received a message: %s\n", common.CString(pdata))
	}

	// the server hangs up
	return common.DisconnectAndWaitForClose(ctx, c)
}
