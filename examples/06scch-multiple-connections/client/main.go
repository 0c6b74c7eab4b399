// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/06scch-multiple-connections/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 06scch-multiple-connections, the
// Go port of librpma's examples/06scch-multiple-connections/client.c (the
// client of 06-multiple-connections with one more name): it picks a
// name with the C library's rand() seeded with <seed> (so a C and a Go
// client pick the same name), exposes it in a 32-byte memory region
// registered for remote reads, connects with the region's descriptor as
// private data (common_data) and waits for the server to read the name and
// hang up.
//
//	client <server_address> <port> <seed>
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// names are the names the client picks from.
var names = common.Names06scch

func main() {
	common.Start(4, "usage: %s <server_address> <port> <seed>\n")

	seed, err := common.StrtoulNoError(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "strtoul(seed) overflowed")
		os.Exit(255)
	}
	common.Exit(run(os.Args[1], os.Args[2], seed))
}

func run(addr, port string, seed uint64) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	// the name, NUL-terminated in 32 bytes
	name := common.EncodeName(common.PickName(names, seed))
	fmt.Printf("My names is: %s\n", common.CString(name[:]))

	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	// in DRAM, registered as the source of RDMA reads
	src, closeSrc, err := common.RegDRAM(p, common.MaxNameSize, mr.UsageReadSrc)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "name", closeSrc)
	copy(src.Bytes(), name[:])
	pdata, err := common.PrivateDataFor(src, 0)
	if err != nil {
		return err
	}

	// connect with it: the server reads the name, then hangs up
	return common.ConnectAndWaitForClose(ctx, p, addr, port, pdata)
}
