// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2021-2022, Intel Corporation
// Copyright (c) 2021 Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/11-write-with-imm/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command server is the server of example 11-write-with-imm, the Go port of
// librpma's examples/11-write-with-imm/server.c.
//
//	server <server_address> <port>
//
// It exposes a 1 KiB write destination to the client in its private data
// (common_data) and posts a 1-byte receive, which the client's write with
// immediate data consumes. The completion must be
// IBV_WC_RECV_RDMA_WITH_IMM with IBV_WC_WITH_IMM, and its immediate value
// must equal the uint32 the client wrote at the start of the region; the
// server prints "The value '<v>' was written together with immediate data
// '<imm>'" and waits for the client to disconnect.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port>\n"

func main() {
	common.Start(3, usage)
	common.ExitRPMA(run(os.Args[1], os.Args[2]))
}

func run(addr, port string) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// a peer on the device of addr, and a listening endpoint at addr:port
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// prepare memory: the write destination and a 1-byte receive buffer
	dstMR, closeDst, err := common.RegDRAM(p, common.Kilobyte, mr.UsageWriteDst)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "write destination", closeDst)
	recvMR, closeRecv, err := common.RegDRAM(p, 1, mr.UsageRecv)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "receive buffer", closeRecv)

	// the data for the client's write: the region's descriptor, offset 0
	pdata, err := common.PrivateDataFor(dstMR, 0)
	if err != nil {
		return err
	}

	// receive an incoming connection request, prepare to receive an
	// immediate data from the client, accept the request and wait for the
	// connection to be established
	c, err := common.ServerAcceptPrepared(ctx, e, nil, pdata, func(req *conn.ConnReq) error {
		return req.Recv(recvMR, 0, 1, 0)
	})
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)

	err = receive(ctx, c, dstMR.Bytes())
	return errors.Join(err, common.WaitForCloseAndDisconnect(ctx, c))
}

// receive validates the completion of the client's write with immediate
// data against the value written.
func receive(ctx context.Context, c *conn.Conn, dst []byte) error {
	wc, err := common.WaitForCompletion(ctx, c.CQ())
	if err != nil {
		return err
	}
	if err := common.ValidateImmWC(wc, rpma.WCRecvRDMAWithImm); err != nil {
		return err
	}
	if wc.Flags&cq.WithImm == 0 {
		return common.CError("Received an unexpected completion flag (no IBV_WC_WITH_IMM)")
	}
	expImm, err := common.DecodeImm(dst)
	if err != nil {
		return err
	}
	if wc.Imm != expImm {
		return common.CError("Received unexpected immediate data (%d != %d)", wc.Imm, expImm)
	}
	fmt.Printf("The value '%d' was written together with immediate data '%d'\n", expImm, wc.Imm)
	return nil
}
