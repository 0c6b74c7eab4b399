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
	"path/filepath"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/examples/internal/common/gpspm"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> [<pmem-path>]\n" + common.PMemUsage

// timeout bounds every wait (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, usage, os.Args[0])
		os.Exit(255)
	}
	// as every librpma example: the library's INFO messages on stderr
	rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)
	path := ""
	if len(os.Args) >= 4 {
		path = os.Args[3]
	}
	if err := run(os.Args[1], os.Args[2], path); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(exitCode(err))
	}
}

// exitCode is what the C example returns: the librpma error code, else -1.
func exitCode(err error) int {
	if code, ok := rpma.CodeOf(err); ok {
		return int(code) & 0xff
	}
	return 255
}

func run(addr, port, path string) (err error) {
	// the memory the client writes to: PMem after the signature, or DRAM
	var region *pmem.Region
	dataOffset := 0
	if path != "" {
		if region, err = mapPMem(path); err != nil {
			return err
		}
		defer closeLater(&err, "pmem.Region.Close", region.Close)
		sig := common.SignatureCheck{Size: common.HelloStrSize, Persist: region.Persist}
		res, e := sig.Apply(region.Bytes())
		if e != nil {
			return fmt.Errorf("%s: %w", path, e)
		}
		dataOffset = res.DataOffset
	} else {
		fmt.Fprint(os.Stderr, common.NoPMemMsg)
		if region, err = pmem.Alloc(common.HelloStrSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer closeLater(&err, "pmem.Region.Close", region.Close)
	}
	mem, isPMem := region.Bytes(), region.Kind() != pmem.Anonymous

	// the messaging buffer: the send slot, then the receive slot
	msgBuf, err := pmem.Alloc(gpspm.MsgBufferSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", msgBuf.Close)

	// if the string content is not empty
	if mem[dataOffset] != 0 {
		fmt.Printf("Old value: %s\n", common.CString(mem[dataOffset:]))
	}

	// lookup the device via the address and create a new peer using it
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeLater(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeLater(&err, "peer.Peer.Close", p.Close)

	// start a listening endpoint at addr:port
	e, err := ep.Listen(p, addr, port)
	if err != nil {
		return fmt.Errorf("ep.Listen: %w", err)
	}
	defer closeLater(&err, "ep.Endpoint.Shutdown", e.Shutdown)

	// register the memory (on rxe, FsDAX memory fails here: it needs ODP)
	mrUsage := mr.UsageWriteDst | mr.UsageFlushVisibility
	if isPMem {
		mrUsage = mr.UsageWriteDst | mr.UsageFlushPersistent
	}
	m, err := mr.Reg(p, mem, mrUsage)
	if err != nil {
		return fmt.Errorf("mr.Reg(%s): %w", region.Kind(), err)
	}
	defer closeLater(&err, "mr.Local.Dereg", m.Dereg)
	if m.ODP() {
		// FsDAX registered with on-demand paging: fault the pages in now,
		// as librpma's example does (rpma_mr_advise)
		if err := m.Advise(0, len(mem), mr.AdvicePrefetchWrite, mr.AdviseFlagFlush); err != nil {
			return fmt.Errorf("mr.Local.Advise: %w", err)
		}
	}
	// register the messaging memory
	msgMR, err := mr.Reg(p, msgBuf.Bytes(), mr.UsageSend|mr.UsageRecv|mr.UsageFlushVisibility)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", msgMR.Dereg)

	// the private data: where to write and the region's descriptor
	desc := m.Descriptor()
	pdata, err := common.CommonData{DataOffset: uint16(dataOffset), MRDesc: desc[:]}.MarshalBinary()
	if err != nil {
		return err
	}

	// a receive CQ for the flush request
	cfg := conn.DefaultConfig()
	cfg.RCQSize = gpspm.RCQSize

	// receive an incoming connection request
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	req, err := e.NextConnReq(ctx, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
	}
	// prepare buffer for a flush request
	if err := req.Recv(msgMR, gpspm.RecvOffset, gpspm.MsgSizeMax, 0); err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Recv: %w", err)
	}
	// accept the connection request and obtain the connection object
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)
	if err := expectEvent(c, rpma.ConnEstablished); err != nil {
		return err
	}

	if err := serveFlush(c, region, isPMem, msgBuf.Bytes(), msgMR); err != nil {
		return err
	}

	// wait for the client to disconnect
	if err := waitForCloseAndDisconnect(c); err != nil {
		return err
	}
	fmt.Printf("New value: %s\n", common.CString(mem[dataOffset:]))
	return nil
}

// serveFlush receives the client's flush request, persists the range it
// names and sends the flush response.
func serveFlush(c *conn.Conn, region *pmem.Region, isPMem bool, msg []byte, msgMR *mr.Local) error {
	// wait for the receive completion
	wc, err := getWC(c.RCQ())
	if err != nil {
		return err
	}
	if wc.Status != rpma.WCSuccess {
		return fmt.Errorf("rpma_recv() failed: %s", wc.Status)
	}
	if wc.Opcode != rpma.WCRecv {
		return fmt.Errorf("unexpected wc.opcode value (0x%X != 0x%X)", uint32(wc.Opcode), uint32(rpma.WCRecv))
	}

	// unpack a flush request from the received buffer
	recv, _ := gpspm.RecvSlot(msg)
	flushReq, err := gpspm.DecodeRequest(recv[:min(int(wc.ByteLen), len(recv))])
	if err != nil {
		return errors.Join(cErr("Cannot unpack the flush request buffer"), err)
	}
	off, n := flushReq.GetOffset(), flushReq.GetLength()
	fmt.Printf("Flush request received: {offset: 0x%X, length: 0x%X, op_context: 0x%X}\n",
		off, n, flushReq.GetOpContext())

	if isPMem {
		// GPSPM: the server makes the range persistent itself
		if off > uint64(region.Len()) || n > uint64(region.Len())-off {
			return fmt.Errorf("flush request beyond the memory region (%d + %d > %d)", off, n, region.Len())
		}
		if err := region.Persist(int(off), int(n)); err != nil {
			return fmt.Errorf("pmem.Region.Persist: %w", err)
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
	// wait for the send completion
	if wc, err = getWC(c.CQ()); err != nil {
		return err
	}
	if wc.Status != rpma.WCSuccess {
		return fmt.Errorf("rpma_send() failed: %s", wc.Status)
	}
	if wc.Opcode != rpma.WCSend {
		return fmt.Errorf("unexpected wc.opcode value (0x%X != 0x%X)", uint32(wc.Opcode), uint32(rpma.WCSend))
	}
	return nil
}

// mapPMem maps <pmem-path>, a Device DAX or an existing file, as librpma's
// examples do with pmem_map_file (all of it), and says on stderr what kind
// of mapping it got. The signature check then says whether it is big
// enough.
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

// getWC waits for one completion of q.
func getWC(q *cq.CQ) (cq.WC, error) {
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err = q.Wait(ctx)
			cancel()
			if err != nil {
				return cq.WC{}, fmt.Errorf("cq.CQ.Wait: %w", err)
			}
			continue
		}
		if err != nil {
			return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		return wc[0], nil
	}
}

// expectEvent waits for the connection's next event, which must be want.
func expectEvent(c *conn.Conn, want rpma.ConnEvent) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	if ev != want {
		return fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
	}
	return nil
}

// waitForCloseAndDisconnect mirrors common_wait_for_conn_close_and_disconnect:
// wait for RPMA_CONN_CLOSED, then disconnect (the deferred Close deletes).
func waitForCloseAndDisconnect(c *conn.Conn) error {
	err := expectEvent(c, rpma.ConnClosed)
	if e := c.Disconnect(); e != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Disconnect: %w", e))
	}
	return err
}

// cErr returns an error with the C example's message, verbatim.
func cErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
