// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/05-flush-to-persistent/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 05-flush-to-persistent, the Go
// port of librpma's examples/05-flush-to-persistent/client.c: it keeps a
// greeting (struct hello_t) in its memory, connects, takes the server's
// memory region, data offset and peer configuration from the accept private
// data (common_data), writes its greeting's 1 KiB str there with an RDMA
// write and flushes it: to persistence (RPMA_FLUSH_TYPE_PERSISTENT) when the
// server declares direct write to PMem, else to visibility. Then it
// translates the greeting for next time (English <-> Spanish) and hangs up.
//
//	client <server_address> <port> [<pmem-path> [<pmem-offset>]]
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally
// on a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping and persisted with msync. The greeting
// lives after librpma's signature "RPMA_EXAMPLE_SIG" at <pmem-offset>
// (default 0), initialised to "Hello world!" when the signature is missing,
// so each run continues where the last one left off. Without <pmem-path>
// the client uses DRAM and always starts from "Hello world!". It connects,
// waits and hangs up with package session (Connect, WaitFor, Hangup),
// which reads and applies librpma's common_data.
//
// Soft-RoCE (rxe) cannot register FsDAX memory (no on-demand paging): the
// client then fails at mr.Reg with an error saying ODP is needed.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
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

	// connected, with the server's region and its peer configuration
	// applied (session.Connect decodes common_data)
	c, dst, err := session.Connect(ctx, p, addr, port, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)
	if dst == nil {
		return errors.New("the server offered no memory region")
	}

	if err := writeAndFlush(ctx, c, p, dst, mem); err != nil {
		return errors.Join(err, session.Hangup(ctx, c))
	}

	// a surprise for next time
	if str, err = common.TranslateHello(os.Stdout, mem); err != nil {
		return errors.Join(err, session.Hangup(ctx, c))
	}
	fmt.Printf("Translation: %s\n", str)

	return session.Hangup(ctx, c)
}

// writeAndFlush writes the str of the hello_t in mem to the server's memory
// region dst, at the data offset of the connection's private data, and
// flushes it as the server's peer configuration allows.
func writeAndFlush(ctx context.Context, c *conn.Conn, p *peer.Peer, dst *mr.Remote, mem *common.Mem) (err error) {
	src, err := mr.Reg(p, mem.Buf, mr.UsageWriteSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", src.Dereg)

	// where the data starts, and what the server declared (Connect has
	// applied it already)
	var offer session.Offer
	if err := offer.UnmarshalBinary(c.PrivateData()); err != nil {
		return err
	}
	pcfg, err := offer.PeerCfg()
	if err != nil {
		return err
	}
	dstOffset := int(offer.DataOffset)
	if size := dst.Size(); size < uint64(dstOffset) || size-uint64(dstOffset) < common.HelloStrSize {
		return fmt.Errorf("remote memory region size too small for writing the data of the assumed size (%d < %d)",
			size-min(size, uint64(dstOffset)), common.HelloStrSize)
	}

	if err := c.Write(dst, dstOffset, src, mem.DataOffset+common.HelloStrOffset, common.HelloStrSize, rpma.CompletionOnError, 0); err != nil {
		return fmt.Errorf("conn.Write: %w", err)
	}

	// the flush type the server allows
	typ := rpma.FlushVisibility
	if pcfg.DirectWriteToPMem {
		fmt.Println("RPMA_FLUSH_TYPE_PERSISTENT is supported")
		typ = rpma.FlushPersistent
	} else {
		fmt.Println("RPMA_FLUSH_TYPE_PERSISTENT is NOT supported, RPMA_FLUSH_TYPE_VISIBILITY is used instead")
	}
	if err := c.Flush(dst, dstOffset, common.HelloStrSize, typ, rpma.CompletionAlways, common.FlushID); err != nil {
		return fmt.Errorf("conn.Flush: %w", err)
	}
	_, err = session.WaitFor(ctx, c.CQ(), common.FlushID)
	return err
}
