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
	"path/filepath"
	"slices"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/examples/internal/common/gpspm"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> [<pmem-path> [<pmem-offset>]]\n" + common.PMemUsage

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
	if err := run(os.Args[1:]); err != nil {
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

func run(args []string) (err error) {
	addr, port := args[0], args[1]

	// the greeting: a hello_t in PMem after the signature, or in DRAM
	var region *pmem.Region
	dataOffset := 0
	if len(args) >= 3 {
		path := args[2]
		offset := uint64(0)
		if len(args) >= 4 {
			if offset, err = common.StrtoulNoError(args[3]); err != nil {
				return err
			}
			if offset > math.MaxInt32 {
				return fmt.Errorf("<pmem-offset> %d too large", offset)
			}
		}
		if region, err = mapPMem(path); err != nil {
			return err
		}
		defer closeLater(&err, "pmem.Region.Close", region.Close)
		sig := common.SignatureCheck{Offset: int(offset), Size: common.HelloTSize,
			Init: common.InitHello, Persist: region.Persist}
		res, e := sig.Apply(region.Bytes())
		if e != nil {
			return fmt.Errorf("%s: %w", path, e)
		}
		dataOffset = res.DataOffset
	} else {
		fmt.Fprint(os.Stderr, common.NoPMemMsg)
		if region, err = pmem.Alloc(common.HelloTSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer closeLater(&err, "pmem.Region.Close", region.Close)
		// write an initial value
		if err := common.WriteHelloStr(region.Bytes(), common.LangEn); err != nil {
			return err
		}
	}
	hello := region.Bytes()[dataOffset : dataOffset+common.HelloTSize]
	str, err := common.HelloStr(hello)
	if err != nil {
		return err
	}
	fmt.Printf("Next value: %s\n", str)

	// the messaging buffer: the send slot, then the receive slot
	msgBuf, err := pmem.Alloc(gpspm.MsgBufferSize)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeLater(&err, "pmem.Region.Close", msgBuf.Close)

	// lookup the device via the address and create a new peer using it
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	defer closeLater(&err, "peer.Device.Close", dev.Close)
	p, err := peer.New(dev)
	if err != nil {
		return fmt.Errorf("peer.New: %w", err)
	}
	defer closeLater(&err, "peer.Peer.Close", p.Close)

	// a receive CQ for the flush response
	cfg := conn.DefaultConfig()
	cfg.RCQSize = gpspm.RCQSize
	// CQ and RCQ share one completion channel
	cfg.SharedCompChannel = true

	// establish a new connection to a server listening at addr:port
	c, err := connect(p, addr, port, cfg, nil)
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)

	err = writeAndFlush(c, p, region, dataOffset, msgBuf)
	if err == nil {
		// translate the greeting so the next time it will be surprising
		if _, err = common.Translate(os.Stdout, hello); err == nil {
			if err = region.Persist(dataOffset, common.HelloTSize); err != nil {
				err = fmt.Errorf("pmem.Region.Persist: %w", err)
			} else {
				str, _ := common.HelloStr(hello)
				fmt.Printf("Translation: %s\n", str)
			}
		}
	}
	return errors.Join(err, disconnectAndWaitForClose(c))
}

// writeAndFlush writes the greeting to the server and has the server
// persist it with a GPSPM flush request.
func writeAndFlush(c *conn.Conn, p *peer.Peer, region *pmem.Region, dataOffset int, msgBuf *pmem.Region) (err error) {
	// register the memory for the RDMA write (on rxe, FsDAX memory fails
	// here: it needs ODP)
	src, err := mr.Reg(p, region.Bytes(), mr.UsageWriteSrc)
	if err != nil {
		return fmt.Errorf("mr.Reg(%s): %w", region.Kind(), err)
	}
	defer closeLater(&err, "mr.Local.Dereg", src.Dereg)
	// register the messaging memory
	msgMR, err := mr.Reg(p, msgBuf.Bytes(), mr.UsageSend|mr.UsageRecv)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeLater(&err, "mr.Local.Dereg", msgMR.Dereg)

	// obtain the remote side resources description
	pdata := c.PrivateData()
	if len(pdata) < common.CommonDataSize {
		return fmt.Errorf("received connection's private data is too small (%d < %d)", len(pdata), common.CommonDataSize)
	}
	data, err := common.DecodeCommonDataMROnly(pdata)
	if err != nil {
		return err
	}
	dst, err := mr.RemoteFromDescriptor(data.MRDesc)
	if err != nil {
		return fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	dstOffset := uint64(data.DataOffset)
	if size := dst.Size(); size < dstOffset || size-dstOffset < common.HelloStrSize {
		return cErr("Size of the remote memory region is too small for writing the data of the assumed size (%d < %d)",
			int64(size)-int64(dstOffset), common.HelloStrSize)
	}

	// write the greeting (its completion comes only on error)
	if err := c.Write(dst, int(dstOffset), src, dataOffset+common.HelloStrOffset, common.HelloStrSize,
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
	w := &completions{c: c}
	if _, err := w.waitAndValidate(rpma.WCSend, "rpma_send()"); err != nil {
		return err
	}
	// wait for the receive completion: the flush response
	wc, err := w.waitAndValidate(rpma.WCRecv, "rpma_recv()")
	if err != nil {
		return err
	}
	recv, _ := gpspm.RecvSlot(msg)
	resp, err := gpspm.DecodeResponse(recv[:min(int(wc.ByteLen), len(recv))])
	if err != nil {
		return errors.Join(cErr("Cannot unpack the flush response buffer"), err)
	}
	if resp.GetOpContext() != gpspm.FlushID {
		return fmt.Errorf("unexpected flush_resp->op_context value (0x%X != 0x%X)", resp.GetOpContext(), gpspm.FlushID)
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

// completions waits for the completions of a connection whose CQ and RCQ
// share one completion channel (Config.SharedCompChannel), as
// wait_and_validate_completion of librpma's 09scch example does with
// rpma_conn_wait and rpma_cq_get_wc. rpma_conn_wait reports whichever CQ
// got the next event; completions of the other kind that arrive first are
// kept until asked for.
type completions struct {
	c       *conn.Conn
	pending []cq.WC
}

// waitAndValidate returns the next completion with opcode, after checking
// its status; fn names the operation in the error message.
func (w *completions) waitAndValidate(opcode rpma.WCOpcode, fn string) (cq.WC, error) {
	for {
		for i, wc := range w.pending {
			if wc.Status != rpma.WCSuccess {
				return wc, fmt.Errorf("%s failed: %s", fn, wc.Status)
			}
			if wc.Opcode == opcode {
				w.pending = slices.Delete(w.pending, i, i+1)
				return wc, nil
			}
		}
		// wait for the next completion event of either CQ ...
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		q, _, err := w.c.Wait(ctx)
		cancel()
		if err != nil {
			return cq.WC{}, fmt.Errorf("conn.Conn.Wait: %w", err)
		}
		// ... and collect all the completions of the CQ that got it
		var wcs [2]cq.WC
		for {
			n, err := q.GetWC(wcs[:])
			if errors.Is(err, rpma.ErrNoCompletion) {
				break
			}
			if err != nil {
				return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
			}
			w.pending = append(w.pending, wcs[:n]...)
		}
	}
}

// connect mirrors client_connect of librpma's common-conn.c: a connection
// request to addr:port, connected with pdata, which must get established.
func connect(p *peer.Peer, addr, port string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := conn.NewRequest(ctx, p, addr, port, cfg)
	if err != nil {
		return nil, fmt.Errorf("conn.NewRequest: %w", err)
	}
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	if err := expectEvent(c, rpma.ConnEstablished); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
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

// disconnectAndWaitForClose mirrors common_disconnect_and_wait_for_conn_close:
// disconnect, then wait for RPMA_CONN_CLOSED (the deferred Close deletes).
func disconnectAndWaitForClose(c *conn.Conn) error {
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Conn.Disconnect: %w", err)
	}
	return expectEvent(c, rpma.ConnClosed)
}

// cErr returns an error with the C example's message, verbatim.
func cErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// closeLater runs a deferred close and adds its error to *err.
func closeLater(err *error, what string, close func() error) {
	if e := close(); e != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, e))
	}
}
