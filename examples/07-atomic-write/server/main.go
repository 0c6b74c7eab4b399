// Command server is the server of example 07-atomic-write, the Go port of
// librpma's examples/07-atomic-write/server.c: it keeps a log (struct log:
// an 8-byte signature, the 8-byte offset "used" of its end, 1 KiB of data)
// in its memory, registered for remote writes, reads and flushes, and hands
// the region's descriptor and the offset of "used" to the client in the
// accept private data (common_data). The client appends its words to the
// log and moves "used" with an atomic write. When the client has hung up,
// the server prints the log, one word per line.
//
//	server <server_address> <port> [<pmem-path>]
//
// <pmem-path> is a Device DAX (/dev/dax0.0) or an existing file, ideally on
// a DAX file system (FsDAX, mapped with MAP_SYNC); a file elsewhere is
// mapped as a plain shared mapping. The log starts at offset 0, marked by
// the signature "LOG"; a mapping without it gets an empty log, and a log
// that has it keeps growing from run to run. Without <pmem-path> the log is
// in DRAM and starts empty.
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
		os.Exit(254) // librpma's 07 returns -2 on any failure
	}
}

func run(addr, port, path string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// the log: at the start of the PMem mapping (all of it is registered)
	// or in DRAM
	var region *pmem.Region
	var log []byte
	if path != "" {
		if region, err = mapPMem(path); err != nil {
			return err
		}
		defer closeWith(&err, "pmem.Region.Close", region.Close)
		log = region.Bytes()
		if len(log) < common.LogSize {
			return fmt.Errorf("mapped size for %s is too small (%d < %d)", path, len(log), common.LogSize)
		}
		if _, err := common.InitLog(log, region.Persist); err != nil {
			return err
		}
	} else {
		fmt.Fprint(os.Stderr, common.NoPMemMsg)
		if region, err = pmem.Alloc(common.LogSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer closeWith(&err, "pmem.Region.Close", region.Close)
		log = region.Bytes()[:common.LogSize]
		if err := common.ResetLog(log); err != nil {
			return err
		}
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
	usage := mr.UsageWriteDst | mr.UsageReadSrc | mr.UsageFlushVisibility
	if path != "" {
		usage = mr.UsageWriteDst | mr.UsageReadSrc | mr.UsageFlushPersistent
	}
	dst, err := mr.Reg(p, log, usage)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", dst.Dereg)
	if dst.ODP() {
		// FsDAX registered with on-demand paging: fault the pages in now
		if err := dst.Advise(0, len(log), mr.AdvicePrefetchWrite, mr.AdviseFlagFlush); err != nil {
			return fmt.Errorf("mr.Local.Advise: %w", err)
		}
	}

	// the log, and where its "used" is
	desc := dst.Descriptor()
	pdata, err := common.CommonData{DataOffset: common.LogUsedOffset, MRDesc: desc[:]}.MarshalBinary()
	if err != nil {
		return err
	}

	c, err := accept(ctx, e, nil, pdata)
	if err != nil {
		return err
	}
	defer closeWith(&err, "conn.Close", c.Close)

	// the client appends its words, then hangs up
	if err := waitForCloseAndDisconnect(ctx, c); err != nil {
		return err
	}

	words, err := common.LogPrint(log)
	if err != nil {
		return err
	}
	fmt.Print(words)
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
