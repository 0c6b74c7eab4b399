// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/09scch-flush-to-persistent-GPSPM/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 09scch-flush-to-persistent-GPSPM, the
// Go port of librpma's examples/09scch-flush-to-persistent-GPSPM/client.c.
//
//	client <server_address> <port> [<pmem-path> [<pmem-offset>]]
//
// As 09's client, but the connection's main CQ and receive CQ share one
// completion channel, and every completion is collected with
// rpma_conn_wait on the connection.
//
// GPSPM (General Purpose Server Persistency Method): the client writes its
// greeting (hello_t.str, 1 KiB) to the server's memory with an RDMA write,
// then sends a flush request (a protobuf message: offset, length,
// op_context 0xF01D) and waits for the flush response, after which the
// data is persistent on the server. It prints "Next value: <greeting>"
// before and "Translation: <other greeting>" after, having translated its
// own copy.
//
// With <pmem-path> (a Device DAX device such as /dev/dax0.0, or an
// existing file, mapped with MAP_SYNC on a DAX file system) the greeting
// lives after the examples' signature at <pmem-offset> (default 0) and each
// run continues from the last translation; without it, in DRAM.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/examples/internal/common/gpspm"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> [<pmem-path> [<pmem-offset>]]\n" + common.PMemUsage

func main() {
	common.Start(3, usage)
	common.ExitRPMA(run(os.Args[1], os.Args[2], common.Arg(3), common.StrtoulArg(4)))
}

func run(addr, port, path string, offset uint64) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// the greeting: a hello_t in PMem after the signature, or in DRAM
	if offset > math.MaxInt32 {
		return fmt.Errorf("<pmem-offset> %d too large", offset)
	}
	mem, str, err := common.OpenHello(path, int(offset))
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "pmem.Region.Close", mem.Close)
	fmt.Printf("Next value: %s\n", str)

	// the messaging buffer: the send slot, then the receive slot
	msgBuf, err := pmem.Alloc(gpspm.MsgBufferSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer common.CloseWith(&err, "pmem.Region.Close", msgBuf.Close)

	// lookup the device via the address and create a new peer using it
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	// a receive CQ for the flush response
	cfg := conn.DefaultConfig()
	cfg.RCQSize = gpspm.RCQSize
	// CQ and RCQ share one completion channel
	cfg.SharedCompChannel = true

	// establish a new connection to a server listening at addr:port
	c, err := common.ClientConnect(ctx, p, addr, port, cfg, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)

	err = writeAndFlush(ctx, c, p, mem, msgBuf)
	if err == nil {
		// translate the greeting so the next time it will be surprising
		if str, err = common.TranslateHello(os.Stdout, mem); err == nil {
			fmt.Printf("Translation: %s\n", str)
		}
	}
	return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
}

// writeAndFlush writes the greeting to the server and has the server
// persist it with a GPSPM flush request.
func writeAndFlush(ctx context.Context, c *conn.Conn, p *peer.Peer, mem *common.Mem, msgBuf *pmem.Region) (err error) {
	// register the memory for the RDMA write (on rxe, FsDAX memory fails
	// here: it needs ODP)
	src, err := mr.Reg(p, mem.Buf, mr.UsageWriteSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg(%s): %w", mem.Region.Kind(), err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", src.Dereg)
	// register the messaging memory
	msgMR, err := mr.Reg(p, msgBuf.Bytes(), mr.UsageSend|mr.UsageRecv)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", msgMR.Dereg)

	// obtain the remote side resources description
	dst, off, err := common.RemoteMR(c.PrivateData())
	if err != nil {
		return err
	}
	dstOffset := uint64(off)
	if size := dst.Size(); size < dstOffset || size-dstOffset < common.HelloStrSize {
		return common.CError("Size of the remote memory region is too small for writing the data of the assumed size (%d < %d)",
			int64(size)-int64(dstOffset), common.HelloStrSize)
	}

	// write the greeting (its completion comes only on error)
	if err := c.Write(dst, int(dstOffset), src, mem.DataOffset+common.HelloStrOffset, common.HelloStrSize,
		rpma.CompletionOnError, 0); err != nil {
		return fmt.Errorf("conn.Conn.Write: %w", err)
	}
	// prepare a response buffer
	if err := c.Recv(msgMR, gpspm.RecvOffset, gpspm.MsgSizeMax, 0); err != nil {
		return fmt.Errorf("conn.Conn.Recv: %w", err)
	}
	// prepare a flush request and pack it to the send buffer
	req, err := gpspm.EncodeRequest(dstOffset, common.HelloStrSize, gpspm.FlushID)
	if err != nil {
		return err
	}
	msg := msgBuf.Bytes()
	send, _ := gpspm.SendSlot(msg)
	copy(send, req)
	// send the flush request
	if err := c.Send(msgMR, gpspm.SendOffset, len(req), rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Conn.Send: %w", err)
	}

	// wait for the send completion
	w := common.NewSharedChannel(c)
	if _, err := w.WaitAndValidate(ctx, rpma.WCSend, "rpma_send()"); err != nil {
		return err
	}
	// wait for the receive completion: the flush response
	wc, err := w.WaitAndValidate(ctx, rpma.WCRecv, "rpma_recv()")
	if err != nil {
		return err
	}
	recv, _ := gpspm.RecvSlot(msg)
	resp, err := gpspm.DecodeResponse(recv[:min(int(wc.ByteLen), len(recv))])
	if err != nil {
		return errors.Join(common.CError("Cannot unpack the flush response buffer"), err)
	}
	if resp.GetOpContext() != gpspm.FlushID {
		return fmt.Errorf("unexpected flush_resp->op_context value (0x%X != 0x%X)", resp.GetOpContext(), gpspm.FlushID)
	}
	return nil
}
