// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/04-write-to-persistent/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 04-write-to-persistent, the Go
// port of librpma's examples/04-write-to-persistent/server.c: it registers
// its memory for remote writes and reads, hands the region's descriptor and
// the offset of its data to the client in the accept private data
// (common_data), and waits for the client to write its greeting there and
// hang up. Then it prints the greeting.
//
//	server <server_address> <port> [<pmem-path>]
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally on
// a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping. Its contents follow librpma's signature
// convention (common.SignatureCheck): the data lives right after
// "RPMA_EXAMPLE_SIG" at offset 0, so the next run prints it as the old
// value. Without <pmem-path> the server uses DRAM.
//
// Soft-RoCE (rxe) cannot register FsDAX memory (no on-demand paging): the
// server then fails at mr.Reg with an error saying ODP is needed. Use a
// Device DAX there.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port> [<pmem-path>]\n"+common.PMemUsage)
	common.Exit(run(os.Args[1], os.Args[2], common.Arg(3)))
}

func run(addr, port, path string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	// the memory the client writes to: PMem (all of the mapping, the data
	// after the signature) or 1 KiB of DRAM
	mem, err := common.OpenMem(path, common.SignatureCheck{Size: common.HelloStrSize})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "pmem.Region.Close", mem.Close)
	str := mem.Data
	if str[0] != 0 {
		fmt.Printf("Old value: %s\n", common.CString(str))
	}

	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	dst, err := mr.Reg(p, mem.Buf, mr.UsageWriteDst|mr.UsageReadSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", dst.Dereg)
	if err := common.AdviseFsDAX(dst); err != nil {
		return err
	}

	// where the client writes
	pdata, err := common.PrivateDataFor(dst, mem.DataOffset)
	if err != nil {
		return err
	}

	// let the client in with it: the client writes, then hangs up
	if err := common.AcceptAndWaitForClose(ctx, e, pdata); err != nil {
		return err
	}

	fmt.Printf("New value: %s\n", common.CString(str))
	return nil
}
