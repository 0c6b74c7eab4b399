// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/07-atomic-write/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command client is the client of example 07-atomic-write, the Go port of
// librpma's examples/07-atomic-write/client.c: it connects and takes the
// server's log and the offset of its "used" field from the accept private
// data (common_data), reads "used" with an RDMA read, then appends each
// word (with its terminating NUL) at "used": an RDMA write and a flush of
// the word, then an atomic write of the new "used" and its flush. The
// server declares nothing: the client takes it as writing directly to
// PMem, so the flushes are of type persistent when the log is in PMem.
//
//	client <server_address> <port> <word1> [<word2>] [..]
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

func main() {
	common.Start(4, "usage: %s <server_address> <port> <word1> [<word2>] [..]\n")
	// librpma's 07 returns -2 on any failure
	common.ExitStatus(run(os.Args[1], os.Args[2], os.Args[3:]), 254)
}

func run(addr, port string, words []string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()

	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	c, err := common.ClientConnect(ctx, p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)

	if err := appendWords(ctx, c, p, words); err != nil {
		return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
	}
	return common.DisconnectAndWaitForClose(ctx, c)
}

// appendWords appends words to the server's log, described in the
// connection's private data.
func appendWords(ctx context.Context, c *conn.Conn, p *peer.Peer, words []string) (err error) {
	// the server declares nothing: take it as writing directly to PMem,
	// so that a log in PMem can be flushed to persistence
	if err := c.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}); err != nil {
		return fmt.Errorf("conn.ApplyRemotePeerCfg: %w", err)
	}

	// a word at a time, and "used": 1 KiB of DRAM, the source of RDMA
	// writes and the destination of RDMA reads
	src, closeSrc, err := common.RegDRAM(p, common.Kilobyte, mr.UsageWriteSrc|mr.UsageReadDst)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "buffer", closeSrc)
	buf := src.Bytes()

	// the server's log, and where its "used" is
	dst, usedOffset, err := common.RemoteMR(c.PrivateData())
	if err != nil {
		return err
	}

	// where the log ends
	if err := c.Read(src, 0, dst, usedOffset, 8, rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Read: %w", err)
	}
	wc, err := common.WaitForCompletion(ctx, c.CQ())
	if err != nil {
		return err
	}
	if wc.Status != rpma.WCSuccess {
		return fmt.Errorf("rpma_read() failed: %s", wc.Status)
	}
	used := binary.LittleEndian.Uint64(buf)
	fmt.Printf("used value: %d\n", used)
	if dst.Size() <= used {
		return errors.New("log size exhausted")
	}

	typ := rpma.FlushVisibility
	if dst.FlushUsage()&mr.UsageFlushPersistent != 0 {
		typ = rpma.FlushPersistent
	}

	for _, word := range words {
		// the word and its NUL at the end of the log
		w := common.LogWord(word)
		copy(buf, w)
		if err := c.Write(dst, int(used), src, 0, len(w), rpma.CompletionOnError, 0); err != nil {
			return fmt.Errorf("conn.Write: %w", err)
		}
		if err := c.Flush(dst, int(used), len(w), typ, rpma.CompletionOnError, 0); err != nil {
			return fmt.Errorf("conn.Flush: %w", err)
		}

		// then, atomically, the new end of the log
		used += uint64(len(w))
		if err := c.AtomicWrite(dst, usedOffset, common.EncodeUsed(used), rpma.CompletionOnError, 0); err != nil {
			return fmt.Errorf("conn.AtomicWrite: %w", err)
		}
		if err := c.Flush(dst, usedOffset, 8, typ, rpma.CompletionAlways, common.FlushID); err != nil {
			return fmt.Errorf("conn.Flush: %w", err)
		}
		wc, err := common.WaitForCompletion(ctx, c.CQ())
		if err != nil {
			return err
		}
		if wc.OpContext != common.FlushID {
			return fmt.Errorf("unexpected wc.wr_id value (0x%X != 0x%X)", wc.OpContext, common.FlushID)
		}
		if wc.Status != rpma.WCSuccess {
			return fmt.Errorf("rpma_flush() failed: %s", wc.Status)
		}
	}
	return nil
}
