// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/09-flush-to-persistent-GPSPM/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 09-flush-to-persistent-GPSPM, the
// Go port of librpma's examples/09-flush-to-persistent-GPSPM/server.c.
//
//	server <server_address> <port> [<pmem-path>]
//
// GPSPM (General Purpose Server Persistency Method): the server exposes
// 1 KiB of (persistent) memory as a write destination in its private data
// (common_data); the client writes its greeting there with an RDMA write
// and sends a flush request (a protobuf message); the server persists the
// requested range itself and answers with a flush response carrying the
// request's op_context.
//
// With <pmem-path> (a Device DAX device such as /dev/dax0.0, or an
// existing file, mapped with MAP_SYNC on a DAX file system) the data lives
// after the examples' signature at the start of the mapping ("Old value:
// ..." shows what an earlier run left); without it, in DRAM.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/examples/internal/common/gpspm"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> [<pmem-path>]\n" + common.PMemUsage

func main() {
	common.Start(3, usage)
	common.ExitRPMA(run(os.Args[1], os.Args[2], common.Arg(3)))
}

func run(addr, port, path string) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// the memory the client writes to: PMem after the signature, or DRAM
	mem, err := common.OpenMem(path, common.SignatureCheck{Size: common.HelloStrSize})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "pmem.Region.Close", mem.Close)

	// the messaging buffer: the send slot, then the receive slot
	msgBuf, err := pmem.Alloc(gpspm.MsgBufferSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer common.CloseWith(&err, "pmem.Region.Close", msgBuf.Close)

	// if the string content is not empty
	if mem.Data[0] != 0 {
		fmt.Printf("Old value: %s\n", common.CString(mem.Data))
	}

	// a peer on the device of addr, and a listening endpoint at addr:port
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// register the memory (on rxe, FsDAX memory fails here: it needs ODP)
	mrUsage := mr.UsageWriteDst | mr.UsageFlushVisibility
	if mem.IsPMem {
		mrUsage = mr.UsageWriteDst | mr.UsageFlushPersistent
	}
	m, err := mr.Reg(p, mem.Buf, mrUsage)
	if err != nil {
		return fmt.Errorf("mr.Reg(%s): %w", mem.Region.Kind(), err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", m.Dereg)
	if err := common.AdviseFsDAX(m); err != nil {
		return err
	}
	// register the messaging memory
	msgMR, err := mr.Reg(p, msgBuf.Bytes(), mr.UsageSend|mr.UsageRecv|mr.UsageFlushVisibility)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", msgMR.Dereg)

	// the private data: where to write and the region's descriptor
	pdata, err := common.PrivateDataFor(m, mem.DataOffset)
	if err != nil {
		return err
	}

	// a receive CQ for the flush request
	cfg := conn.DefaultConfig()
	cfg.RCQSize = gpspm.RCQSize

	// receive an incoming connection request, prepare a buffer for a flush
	// request, accept the request and wait for the connection to be
	// established
	c, err := common.ServerAcceptPrepared(ctx, e, cfg, pdata, func(req *conn.ConnReq) error {
		return req.Recv(msgMR, gpspm.RecvOffset, gpspm.MsgSizeMax, 0)
	})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)

	if err := serveFlush(ctx, c, mem, msgBuf.Bytes(), msgMR); err != nil {
		return err
	}

	// wait for the client to disconnect
	if err := common.WaitForCloseAndDisconnect(ctx, c); err != nil {
		return err
	}
	fmt.Printf("New value: %s\n", common.CString(mem.Data))
	return nil
}

// serveFlush receives the client's flush request, persists the range it
// names and sends the flush response.
func serveFlush(ctx context.Context, c *conn.Conn, mem *common.Mem, msg []byte, msgMR *mr.Local) error {
	// wait for the receive completion
	wc, err := common.WaitAndValidate(ctx, c.RCQ(), rpma.WCRecv, "rpma_recv()", common.OpcodeMsgHex)
	if err != nil {
		return err
	}

	// unpack a flush request from the received buffer
	recv, _ := gpspm.RecvSlot(msg)
	flushReq, err := gpspm.DecodeRequest(recv[:min(int(wc.ByteLen), len(recv))])
	if err != nil {
		return errors.Join(common.CError("Cannot unpack the flush request buffer"), err)
	}
	off, n := flushReq.GetOffset(), flushReq.GetLength()
	fmt.Printf("Flush request received: {offset: 0x%X, length: 0x%X, op_context: 0x%X}\n",
		off, n, flushReq.GetOpContext())

	if mem.IsPMem {
		// GPSPM: the server makes the range persistent itself
		if off > uint64(len(mem.Buf)) || n > uint64(len(mem.Buf))-off {
			return fmt.Errorf("flush request beyond the memory region (%d + %d > %d)", off, n, len(mem.Buf))
		}
		if err := mem.Persist(int(off), int(n)); err != nil {
			return err
		}
	}

	// prepare a flush response and pack it to the send buffer
	resp, err := gpspm.EncodeResponse(flushReq.GetOpContext())
	if err != nil {
		return err
	}
	send, _ := gpspm.SendSlot(msg)
	copy(send, resp)

	// send the flush response
	if err := c.Send(msgMR, gpspm.SendOffset, len(resp), rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Conn.Send: %w", err)
	}
	// wait for the send completion (or the client's disconnect, which
	// can overtake it once the client has the response)
	_, err = common.WaitAndValidate(ctx, c.CQ(), rpma.WCSend, "rpma_send()", common.OpcodeMsgHex)
	return common.ReplyDelivered(err)
}
