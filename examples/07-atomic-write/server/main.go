// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/07-atomic-write/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 07-atomic-write, the Go port of
// librpma's examples/07-atomic-write/server.c: it keeps a log (struct log:
// an 8-byte signature, the 8-byte offset "used" of its end, 1 KiB of data)
// in its memory, registered for remote writes, reads and flushes, and hands
// the region's descriptor and the offset of "used" to the client in the
// accept private data (common_data). The client appends its words to the
// log and moves "used" with an atomic write. When the client has hung up,
// the server prints the log, one word per line.
//
//	server <server_address> <port> [<pmem-path>]
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally on
// a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping. The log starts at offset 0, marked by
// the signature "LOG"; a mapping without it gets an empty log, and a log
// that has it keeps growing from run to run. Without <pmem-path> the log is
// in DRAM and starts empty.
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
	"github.com/gorpma/rpma/pmem"
)

func main() {
	common.Start(3, "usage: %s <server_address> <port> [<pmem-path>]\n"+common.PMemUsage)
	// librpma's 07 returns -2 on any failure
	common.ExitStatus(run(os.Args[1], os.Args[2], common.Arg(3)), 254)
}

func run(addr, port, path string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	// the log: at the start of the PMem mapping (all of it is registered)
	// or in DRAM
	var region *pmem.Region
	var log []byte
	if path != "" {
		if region, err = common.MapPMem(path); err != nil {
			return err
		}
		defer common.CloseWith(&err, "pmem.Region.Close", region.Close)
		log = region.Bytes()
		if len(log) < common.LogSize {
			return fmt.Errorf("mapped size for %s is too small (%d < %d)", path, len(log), common.LogSize)
		}
		if _, err := common.InitLog(log, region.Persist); err != nil {
			return err
		}
	} else {
		fmt.Fprint(os.Stderr, common.NoPMemMsg)
		if region, err = pmem.Alloc(common.LogSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer common.CloseWith(&err, "pmem.Region.Close", region.Close)
		log = region.Bytes()[:common.LogSize]
		if err := common.ResetLog(log); err != nil {
			return err
		}
	}

	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// PMem may be flushed to persistence, DRAM only to visibility
	usage := mr.UsageWriteDst | mr.UsageReadSrc | mr.UsageFlushVisibility
	if path != "" {
		usage = mr.UsageWriteDst | mr.UsageReadSrc | mr.UsageFlushPersistent
	}
	dst, err := mr.Reg(p, log, usage)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", dst.Dereg)
	if err := common.AdviseFsDAX(dst); err != nil {
		return err
	}

	// the log, and where its "used" is
	pdata, err := common.PrivateDataFor(dst, common.LogUsedOffset)
	if err != nil {
		return err
	}

	// let the client in with it: the client appends its words, then hangs up
	if err := common.AcceptAndWaitForClose(ctx, e, pdata); err != nil {
		return err
	}

	words, err := common.LogPrint(log)
	if err != nil {
		return err
	}
	fmt.Print(words)
	return nil
}
