// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/03-read-to-persistent/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 03-read-to-persistent, the Go
// port of librpma's examples/03-read-to-persistent/server.c: it accepts a
// connection whose private data (common_data) describes the client's
// memory region, reads the client's 1 KiB greeting from it with one RDMA
// read into its own memory, persists it there and prints it.
//
//	server <server_address> <port> [<pmem-path>]
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally on
// a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping and persisted with msync. Its contents
// follow librpma's signature convention (common.SignatureCheck): the
// greeting lives right after "RPMA_EXAMPLE_SIG" at offset 0, so the next
// run prints it as the old value. Without <pmem-path> the server uses DRAM.
//
// Soft-RoCE (rxe) cannot register FsDAX memory (no on-demand paging): the
// server then fails at mr.Reg with an error saying ODP is needed. Use a
// Device DAX there.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port> [<pmem-path>]\n"+common.PMemUsage)
	common.Exit(run(os.Args[1], os.Args[2], common.Arg(3)))
}

func run(addr, port, path string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	// the memory the greeting is read into: PMem (all of the mapping,
	// the greeting after the signature) or 1 KiB of DRAM
	mem, err := common.OpenMem(path, common.SignatureCheck{Size: common.HelloStrSize})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "pmem.Region.Close", mem.Close)
	str := mem.Data

	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	dst, err := mr.Reg(p, mem.Buf, mr.UsageReadDst)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", dst.Dereg)
	if err := common.AdviseFsDAX(dst); err != nil {
		return err
	}

	c, err := common.ServerAccept(ctx, e, nil, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)

	// the client's memory region
	src, srcOffset, err := common.RemoteMR(c.PrivateData())
	if err != nil {
		return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
	}

	if str[0] != 0 {
		fmt.Printf("Old value: %s\n", common.CString(str))
	}

	// read the client's greeting over ours
	if err := c.Read(dst, mem.DataOffset, src, srcOffset, common.HelloStrSize, rpma.CompletionAlways, 0); err != nil {
		return errors.Join(fmt.Errorf("conn.Read: %w", err), common.DisconnectAndWaitForClose(ctx, c))
	}
	if _, err := common.WaitAndValidate(ctx, c.CQ(), rpma.WCRDMARead, "rpma_read()", common.OpcodeMsgDec); err != nil {
		return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
	}
	if mem.IsPMem {
		if err := mem.Persist(mem.DataOffset, common.HelloStrSize); err != nil {
			return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
		}
	}

	fmt.Printf("New value: %s\n", common.CString(str))

	// the server hangs up
	return common.DisconnectAndWaitForClose(ctx, c)
}
