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
// the client uses DRAM and always starts from "Hello world!".
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

	c, err := common.ClientConnect(ctx, p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "conn.Close", c.Close)

	if err := writeAndFlush(ctx, c, p, mem); err != nil {
		return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
	}

	// a surprise for next time
	if str, err = common.TranslateHello(os.Stdout, mem); err != nil {
		return errors.Join(err, common.DisconnectAndWaitForClose(ctx, c))
	}
	fmt.Printf("Translation: %s\n", str)

	return common.DisconnectAndWaitForClose(ctx, c)
}

// writeAndFlush writes the str of the hello_t in mem to the server's memory
// region, described in the connection's private data with the server's
// peer configuration, and flushes it.
func writeAndFlush(ctx context.Context, c *conn.Conn, p *peer.Peer, mem *common.Mem) (err error) {
	src, err := mr.Reg(p, mem.Buf, mr.UsageWriteSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer common.CloseWith(&err, "mr.Local.Dereg", src.Dereg)

	// the server's memory region and peer configuration
	var cd common.CommonData
	if err := cd.UnmarshalBinary(c.PrivateData()); err != nil {
		return err
	}
	pcfg, err := peer.CfgFromDescriptor(cd.PeerCfgDesc)
	if err != nil {
		return fmt.Errorf("peer.CfgFromDescriptor: %w", err)
	}
	if err := c.ApplyRemotePeerCfg(pcfg); err != nil {
		return fmt.Errorf("conn.ApplyRemotePeerCfg: %w", err)
	}
	dst, err := mr.RemoteFromDescriptor(cd.MRDesc)
	if err != nil {
		return fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	dstOffset := int(cd.DataOffset)
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
	return nil
}
