// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/03-read-to-persistent/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 03-read-to-persistent, the Go
// port of librpma's examples/03-read-to-persistent/client.c: it keeps a
// greeting (struct hello_t) in its memory, registers that memory for
// remote reads and connects with its descriptor as private data
// (common_data). The server reads the greeting and hangs up; the client
// then translates the greeting for next time (English <-> Spanish).
//
//	client <server_address> <port> [<pmem-path> [<pmem-offset>]]
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally
// on a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping and persisted with msync. The greeting
// lives after librpma's signature "RPMA_EXAMPLE_SIG" at <pmem-offset>
// (default 0), initialised to "Hello world!" when the signature is missing,
// so each run continues where the last one left off. Without <pmem-path>
// the client uses DRAM and always starts from "Hello world!".
//
// Soft-RoCE (rxe) cannot register FsDAX memory (no on-demand paging): the
// client then fails at mr.Reg with an error saying ODP is needed.
package main

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port> [<pmem-path> [<pmem-offset>]]\n"+common.PMemUsage)
	common.Exit(run(os.Args[1], os.Args[2], common.Arg(3), common.StrtoulArg(4)))
}

func run(addr, port, path string, offset uint64) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	// the greeting: a hello_t in PMem after the signature, or in DRAM
	mem, str, err := common.OpenHello(path, int(min(offset, math.MaxInt32)))
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "pmem.Region.Close", mem.Close)
	fmt.Printf("Next value: %s\n", str)

	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	// all of the memory, for the server to read the greeting's str from
	src, err := mr.Reg(p, mem.Buf, mr.UsageReadSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", src.Dereg)
	pdata, err := common.PrivateDataFor(src, mem.DataOffset+common.HelloStrOffset)
	if err != nil {
		return err
	}

	// connect with it: the server reads the greeting, then hangs up
	if err := common.ConnectAndWaitForClose(ctx, p, addr, port, pdata); err != nil {
		return err
	}

	// a surprise for next time
	if str, err = common.TranslateHello(os.Stdout, mem); err != nil {
		return err
	}
	fmt.Printf("Translation: %s\n", str)
	return nil
}
