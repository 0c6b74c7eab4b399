// Command client is the client of example 04-write-to-persistent, the Go
// port of librpma's examples/04-write-to-persistent/client.c: it keeps a
// greeting (struct hello_t) in its memory, connects, takes the server's
// memory region and data offset from the accept private data (common_data)
// and writes its greeting's 1 KiB str there with an RDMA write, followed by
// an 8-byte RDMA read that completes only once the write has been placed.
// Then it translates the greeting for next time (English <-> Spanish) and
// hangs up.
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
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// timeout bounds the whole run: every wait gives up once it has passed
// (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> [<pmem-path> [<pmem-offset>]]\n%s", os.Args[0], common.PMemUsage)
		os.Exit(255)
	}
	// as librpma's examples: the library's INFO messages and above on stderr
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	var path string
	var offset uint64
	if len(os.Args) >= 4 {
		path = os.Args[3]
	}
	if len(os.Args) >= 5 {
		var err error
		if offset, err = common.StrtoulNoError(os.Args[4]); err != nil {
			fmt.Fprintf(os.Stderr, "strtoul(%s) overflowed\n", os.Args[4])
			os.Exit(255)
		}
	}
	if err := run(os.Args[1], os.Args[2], path, offset); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(255)
	}
}

func run(addr, port, path string, offset uint64) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// the greeting: a hello_t in PMem after the signature, or in DRAM
	var region *pmem.Region
	var dataOffset int
	if path != "" {
		if region, err = mapPMem(path); err != nil {
			return err
		}
		defer closeWith(&err, "pmem.Region.Close", region.Close)
		sig, err := common.SignatureCheck{
			Offset:  int(min(offset, math.MaxInt32)),
			Size:    common.HelloTSize,
			Init:    common.InitHello,
			Persist: region.Persist,
		}.Apply(region.Bytes())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		dataOffset = sig.DataOffset
	} else {
		fmt.Fprint(os.Stderr, common.NoPMemMsg)
		if region, err = pmem.Alloc(common.HelloTSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer closeWith(&err, "pmem.Region.Close", region.Close)
		if err := common.WriteHelloStr(region.Bytes(), common.LangEn); err != nil {
			return err
		}
	}
	buf := region.Bytes()
	if path == "" {
		buf = buf[:common.HelloTSize]
	}
	hello := buf[dataOffset : dataOffset+common.HelloTSize]
	str, err := common.HelloStr(hello)
	if err != nil {
		return err
	}
	fmt.Printf("Next value: %s\n", str)

	// the read-after-write buffer, in DRAM
	raw, err := pmem.Alloc(common.RAWBufferSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeWith(&err, "pmem.Region.Close", raw.Close)

	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeWith(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeWith(&err, "peer.Close", p.Close)

	c, err := connect(ctx, p, addr, port, nil, nil)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	if err := write(ctx, c, p, buf, dataOffset, raw.Bytes()[:common.RAWBufferSize]); err != nil {
		return errors.Join(err, disconnectAndWaitForClose(ctx, c))
	}

	// a surprise for next time
	if _, err := common.Translate(os.Stdout, hello); err != nil {
		return errors.Join(err, disconnectAndWaitForClose(ctx, c))
	}
	if path != "" {
		if err := region.Persist(dataOffset, common.HelloTSize); err != nil {
			return errors.Join(fmt.Errorf("pmem.Region.Persist: %w", err), disconnectAndWaitForClose(ctx, c))
		}
	}
	if str, err = common.HelloStr(hello); err != nil {
		return errors.Join(err, disconnectAndWaitForClose(ctx, c))
	}
	fmt.Printf("Translation: %s\n", str)

	return disconnectAndWaitForClose(ctx, c)
}

// write writes the str of the hello_t at dataOffset of buf to the server's
// memory region, described in the connection's private data, and reads 8
// bytes back into raw to know that the write has been placed.
func write(ctx context.Context, c *conn.Conn, p *peer.Peer, buf []byte, dataOffset int, raw []byte) (err error) {
	src, err := mr.Reg(p, buf, mr.UsageWriteSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", src.Dereg)
	rawMR, err := mr.Reg(p, raw, mr.UsageReadDst)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", rawMR.Dereg)

	// the server's memory region
	cd, err := common.DecodeCommonDataMROnly(c.PrivateData())
	if err != nil {
		return err
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

	if err := c.Write(dst, dstOffset, src, dataOffset+common.HelloStrOffset, common.HelloStrSize, rpma.CompletionOnError, 0); err != nil {
		return fmt.Errorf("conn.Write: %w", err)
	}
	// an RDMA read completes after the writes before it have been placed
	if err := c.Read(rawMR, 0, dst, 0, common.RAWBufferSize, rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Read: %w", err)
	}
	wc, err := waitForCompletion(ctx, c.CQ())
	if err != nil {
		return err
	}
	if wc.Status != rpma.WCSuccess {
		return fmt.Errorf("rpma_read() failed: %s", wc.Status)
	}
	if wc.Opcode != rpma.WCRDMARead {
		return fmt.Errorf("unexpected wc.opcode value (%d != %d)", wc.Opcode, rpma.WCRDMARead)
	}
	return nil
}

// mapPMem maps path, a Device DAX or an existing file, as librpma's
// examples do with pmem_map_file (all of it), and says on stderr what kind
// of mapping it got.
func mapPMem(path string) (*pmem.Region, error) {
	// as pmem_map_file without PMEM_FILE_CREATE: the file must exist
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("pmem_map_file() for %s failed: %w", path, err)
	}
	r, err := pmem.Map(path, 0)
	if err != nil {
		return nil, fmt.Errorf("pmem.Map: %w", err)
	}
	switch r.Kind() {
	case pmem.DeviceDAX:
		fmt.Fprintf(os.Stderr, "Using Device DAX %s (%d bytes)\n", path, r.Len())
	case pmem.FsDAX:
		fmt.Fprintf(os.Stderr, "Using FsDAX %s (MAP_SYNC, %d bytes)\n", path, r.Len())
	default:
		fmt.Fprintf(os.Stderr, "Using a file mapping (msync) %s (%d bytes): not persistent memory\n", path, r.Len())
	}
	return r, nil
}

// connect mirrors client_connect of librpma's examples: it connects to
// addr:port with cfg and pdata and waits for the connection to be
// established.
func connect(ctx context.Context, p *peer.Peer, addr, port string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	req, err := conn.NewRequest(ctx, p, addr, port, cfg)
	if err != nil {
		return nil, fmt.Errorf("conn.NewRequest: %w", err)
	}
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	} else if err != nil {
		err = fmt.Errorf("conn.NextEvent: %w", err)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitForCompletion waits for the next work completion of q (rpma_cq_wait
// and rpma_cq_get_wc).
func waitForCompletion(ctx context.Context, q *cq.CQ) (cq.WC, error) {
	wc := make([]cq.WC, 1)
	for {
		_, err := q.GetWC(wc)
		if err == nil {
			return wc[0], nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return cq.WC{}, fmt.Errorf("cq.GetWC: %w", err)
		}
		if err := q.Wait(ctx); err != nil {
			return cq.WC{}, fmt.Errorf("cq.Wait: %w", err)
		}
	}
}

// disconnectAndWaitForClose mirrors common_disconnect_and_wait_for_conn_close:
// this side hangs up.
func disconnectAndWaitForClose(ctx context.Context, c *conn.Conn) error {
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Disconnect: %w", err)
	}
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.NextEvent: %w", err)
	}
	if ev != rpma.ConnClosed {
		fmt.Fprintf(os.Stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
	}
	return c.Close()
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
