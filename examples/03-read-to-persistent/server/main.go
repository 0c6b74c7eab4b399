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
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
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
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> [<pmem-path>]\n%s", os.Args[0], common.PMemUsage)
		os.Exit(255)
	}
	// as librpma's examples: the library's INFO messages and above on stderr
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	var path string
	if len(os.Args) >= 4 {
		path = os.Args[3]
	}
	if err := run(os.Args[1], os.Args[2], path); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(255)
	}
}

func run(addr, port, path string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// the memory the greeting is read into: PMem (all of the mapping,
	// the greeting after the signature) or 1 KiB of DRAM
	var region *pmem.Region
	var dataOffset int
	if path != "" {
		if region, err = mapPMem(path); err != nil {
			return err
		}
		defer closeWith(&err, "pmem.Region.Close", region.Close)
		sig, err := common.SignatureCheck{Size: common.HelloStrSize, Persist: region.Persist}.Apply(region.Bytes())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		dataOffset = sig.DataOffset
	} else {
		fmt.Fprint(os.Stderr, common.NoPMemMsg)
		if region, err = pmem.Alloc(common.HelloStrSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer closeWith(&err, "pmem.Region.Close", region.Close)
	}
	buf := region.Bytes()
	if path == "" {
		buf = buf[:common.HelloStrSize]
	}
	str := buf[dataOffset : dataOffset+common.HelloStrSize]

	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeWith(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeWith(&err, "peer.Close", p.Close)

	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer closeWith(&err, "ep.Shutdown", e.Shutdown)

	dst, err := mr.Reg(p, buf, mr.UsageReadDst)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", dst.Dereg)
	if dst.ODP() {
		// FsDAX registered with on-demand paging: fault the pages in now
		if err := dst.Advise(0, len(buf), mr.AdvicePrefetchWrite, mr.AdviseFlagFlush); err != nil {
			return fmt.Errorf("mr.Local.Advise: %w", err)
		}
	}

	c, err := accept(ctx, e, nil, nil)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the client's memory region
	cd, err := common.DecodeCommonDataMROnly(c.PrivateData())
	if err != nil {
		return errors.Join(err, disconnectAndWaitForClose(ctx, c))
	}
	src, err := mr.RemoteFromDescriptor(cd.MRDesc)
	if err != nil {
		return errors.Join(fmt.Errorf("mr.RemoteFromDescriptor: %w", err), disconnectAndWaitForClose(ctx, c))
	}

	if str[0] != 0 {
		fmt.Printf("Old value: %s\n", common.CString(str))
	}

	// read the client's greeting over ours
	if err := readGreeting(ctx, c, dst, dataOffset, src, int(cd.DataOffset)); err != nil {
		return errors.Join(err, disconnectAndWaitForClose(ctx, c))
	}
	if path != "" {
		if err := region.Persist(dataOffset, common.HelloStrSize); err != nil {
			return errors.Join(fmt.Errorf("pmem.Region.Persist: %w", err), disconnectAndWaitForClose(ctx, c))
		}
	}

	fmt.Printf("New value: %s\n", common.CString(str))

	// the server hangs up
	return disconnectAndWaitForClose(ctx, c)
}

// readGreeting reads the client's 1 KiB greeting at srcOff of src into dst
// at dstOff and waits for the read to complete.
func readGreeting(ctx context.Context, c *conn.Conn, dst *mr.Local, dstOff int, src *mr.Remote, srcOff int) error {
	if err := c.Read(dst, dstOff, src, srcOff, common.HelloStrSize, rpma.CompletionAlways, 0); err != nil {
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

// accept mirrors server_accept_connection of librpma's examples: it waits
// for a connection request, accepts it with pdata and waits for the
// connection to be established.
func accept(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ep.NextConnReq: %w", err)
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
