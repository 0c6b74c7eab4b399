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
	if len(os.Args) < 4 {
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> <word1> [<word2>] [..]\n", os.Args[0])
		os.Exit(255)
	}
	// as librpma's examples: the library's INFO messages and above on stderr
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(254) // librpma's 07 returns -2 on any failure
	}
}

func run(addr, port string, words []string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// a word at a time, and "used"
	mem, err := pmem.Alloc(common.Kilobyte)
	if err != nil {
		return fmt.Errorf("pmem.Alloc: %w", err)
	}
	defer closeWith(&err, "pmem.Region.Close", mem.Close)
	buf := mem.Bytes()[:common.Kilobyte]

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

	if err := appendWords(ctx, c, p, buf, words); err != nil {
		return errors.Join(err, disconnectAndWaitForClose(ctx, c))
	}
	return disconnectAndWaitForClose(ctx, c)
}

// appendWords appends words to the server's log, described in the
// connection's private data.
func appendWords(ctx context.Context, c *conn.Conn, p *peer.Peer, buf []byte, words []string) (err error) {
	// the server declares nothing: take it as writing directly to PMem,
	// so that a log in PMem can be flushed to persistence
	if err := c.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}); err != nil {
		return fmt.Errorf("conn.ApplyRemotePeerCfg: %w", err)
	}

	src, err := mr.Reg(p, buf, mr.UsageWriteSrc|mr.UsageReadDst)
	if err != nil {
		return fmt.Errorf("mr.Reg: %w", err)
	}
	defer closeWith(&err, "mr.Local.Dereg", src.Dereg)

	// the server's log
	cd, err := common.DecodeCommonDataMROnly(c.PrivateData())
	if err != nil {
		return err
	}
	dst, err := mr.RemoteFromDescriptor(cd.MRDesc)
	if err != nil {
		return fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	usedOffset := int(cd.DataOffset)

	// where the log ends
	if err := c.Read(src, 0, dst, usedOffset, 8, rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Read: %w", err)
	}
	wc, err := waitForCompletion(ctx, c.CQ())
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
	if dst.FlushType()&mr.UsageFlushPersistent != 0 {
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
		wc, err := waitForCompletion(ctx, c.CQ())
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
