// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2021-2022, Intel Corporation
// Copyright (c) 2020-2021 Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/10-send-with-imm/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 10-send-with-imm, the Go port of
// librpma's examples/10-send-with-imm/client.c.
//
//	client <server_address> <port> <imm> [word]
//
// It connects with the immediate value <imm> (a uint32) as its private
// data, so that the server knows what to expect, then sends <word> (in a
// 1 KiB buffer) with <imm> as immediate data ("Sending value '<word>' with
// immediate data '<imm>'"), or without a word a 0-byte message with
// immediate data ("Sending immediate data '<imm>'"). After the send's
// completion it disconnects.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <imm> [word]\n"

func main() {
	common.Start(4, usage)

	imm, err := common.ParseImm(os.Args[3])
	common.Exit(err)
	word, hasWord := "", len(os.Args) >= 5
	if hasWord {
		word = os.Args[4]
	}
	common.ExitRPMA(run(os.Args[1], os.Args[2], imm, word, hasWord))
}

func run(addr, port string, imm uint32, word string, hasWord bool) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout

	// lookup the device via the address and create a new peer using it
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	// with a word: a 1 KiB send buffer; without one: no memory at all
	var sendMR *mr.Local
	var send []byte
	n := 0
	if hasWord {
		var closeSend func() error
		if sendMR, closeSend, err = common.RegDRAM(p, common.ImmMessageSize, mr.UsageSend); err != nil {
			return err
		}
		defer common.CloseWith(&err, "send buffer", closeSend)
		send, n = sendMR.Bytes(), common.ImmMessageSize
	}

	// establish a new connection to a server, with the immediate data for
	// validation on the server side as private data
	pdata := common.EncodeImm(imm)
	c, err := common.ClientConnect(ctx, p, addr, port, nil, pdata[:])
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)

	if hasWord {
		// send a message with immediate data to the server
		fmt.Printf("Sending value '%s' with immediate data '%d'\n", word, imm)
		copy(send, common.EncodeSendWithImm(word, true))
	} else {
		// send a 0-byte message with immediate data to the server
		fmt.Printf("Sending immediate data '%d'\n", imm)
	}
	err = c.SendWithImm(sendMR, 0, n, rpma.CompletionAlways, imm, 0)
	if err != nil {
		err = fmt.Errorf("conn.Conn.SendWithImm: %w", err)
	} else {
		// wait for the send's completion and validate it
		var wc cq.WC
		if wc, err = common.WaitForCompletion(ctx, c.CQ()); err == nil {
			err = common.ValidateImmWC(wc, rpma.WCSend)
		}
	}
	return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
}
