// Command server is the server of example 05-flush-to-persistent, the Go
// port of librpma's examples/05-flush-to-persistent/server.c: it registers
// its memory for remote writes and flushes, hands the region's descriptor,
// the offset of its data and its peer configuration (direct write to PMem
// or not) to the client in the accept private data (common_data), and waits
// for the client to write its greeting there, flush it and hang up. Then it
// prints the greeting.
//
//	server <server_address> <port> [<pmem-path>] [direct-pmem-write]
//
// direct-pmem-write "on" (only after a <pmem-path>) declares that RDMA
// writes reach this machine's persistence domain directly (for example, DDIO
// is off), so the client flushes with RPMA_FLUSH_TYPE_PERSISTENT; anything
// else, or nothing, declares the opposite (RPMA_FLUSH_TYPE_VISIBILITY).
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally on
// a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping. Its contents follow librpma's signature
// convention (common.SignatureCheck): the data lives right after
// "RPMA_EXAMPLE_SIG" at offset 0, so the next run prints it as the old
// value. Without <pmem-path> the server uses DRAM.
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
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> [<pmem-path>] [direct-pmem-write]\n%s", os.Args[0], common.PMemUsage)
		os.Exit(255)
	}
	// as librpma's examples: the library's INFO messages and above on stderr
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	var path string
	var pcfg peer.Cfg
	if len(os.Args) >= 4 {
		path = os.Args[3]
	}
	if len(os.Args) >= 5 {
		pcfg.DirectWriteToPMem = os.Args[4] == common.DirectWriteOn
	}
	if err := run(os.Args[1], os.Args[2], path, pcfg); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(255)
	}
}

func run(addr, port, path string, pcfg peer.Cfg) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// the memory the client writes to: PMem (all of the mapping, the data
	// after the signature) or 1 KiB of DRAM
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
	if str[0] != 0 {
		fmt.Printf("Old value: %s\n", common.CString(str))
	}

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

	// PMem may be flushed to persistence, DRAM only to visibility
	usage := mr.UsageWriteDst | mr.UsageFlushVisibility
	if path != "" {
		usage |= mr.UsageFlushPersistent
	}
	dst, err := mr.Reg(p, buf, usage)
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

	// where the client writes, and how it may flush
	desc := dst.Descriptor()
	pdesc := pcfg.Descriptor()
	pdata, err := common.CommonData{DataOffset: uint16(dataOffset), MRDesc: desc[:], PeerCfgDesc: pdesc[:]}.MarshalBinary()
	if err != nil {
		return err
	}

	c, err := accept(ctx, e, nil, pdata)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the client writes and flushes, then hangs up
	if err := waitForCloseAndDisconnect(ctx, c); err != nil {
		return err
	}

	fmt.Printf("New value: %s\n", common.CString(str))
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

// waitForCloseAndDisconnect mirrors common_wait_for_conn_close_and_disconnect:
// the other side hangs up.
func waitForCloseAndDisconnect(ctx context.Context, c *conn.Conn) error {
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.NextEvent: %w", err)
	}
	if ev != rpma.ConnClosed {
		fmt.Fprintf(os.Stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
	}
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Disconnect: %w", err)
	}
	return c.Close()
}

// closeWith calls close and adds its error, if any, to *err.
func closeWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}
