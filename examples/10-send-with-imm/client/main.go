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
	"path/filepath"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <imm> [word]\n"

// timeout bounds every wait (librpma's examples wait forever).
const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintf(os.Stderr, usage, os.Args[0])
		os.Exit(255)
	}
	// as every librpma example: the library's INFO messages on stderr
	rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)

	imm, err := common.ParseImm(os.Args[3])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(255)
	}
	word, hasWord := "", len(os.Args) >= 5
	if hasWord {
		word = os.Args[4]
	}
	if err := run(os.Args[1], os.Args[2], imm, word, hasWord); err != nil {
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

func run(addr, port string, imm uint32, word string, hasWord bool) (err error) {
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

	// with a word: a 1 KiB send buffer; without one: no memory at all
	var sendMR *mr.Local
	var send []byte
	n := 0
	if hasWord {
		var sendBuf *pmem.Region
		if sendBuf, err = pmem.Alloc(common.ImmMessageSize); err != nil {
			return fmt.Errorf("pmem.Alloc: %w", err)
		}
		defer closeLater(&err, "pmem.Region.Close", sendBuf.Close)
		if sendMR, err = mr.Reg(p, sendBuf.Bytes(), mr.UsageSend); err != nil {
			return fmt.Errorf("mr.Reg: %w", err)
		}
		defer closeLater(&err, "mr.Local.Dereg", sendMR.Dereg)
		send, n = sendBuf.Bytes(), common.ImmMessageSize
	}

	// establish a new connection to a server, with the immediate data for
	// validation on the server side as private data
	pdata := common.EncodeImm(imm)
	c, err := connect(p, addr, port, nil, pdata[:])
	if err != nil {
		return err
	}
	defer closeLater(&err, "conn.Conn.Close", c.Close)

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
		err = waitForSend(c.CQ())
	}
	return errors.Join(err, disconnectAndWaitForClose(c))
}

// waitForSend waits for the send's completion and validates it.
func waitForSend(q *cq.CQ) error {
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err = q.Wait(ctx)
			cancel()
			if err != nil {
				return fmt.Errorf("cq.CQ.Wait: %w", err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		break
	}
	if wc[0].Status != rpma.WCSuccess {
		return cErr("Received unexpected completion: %s", wc[0].Status)
	}
	if wc[0].Opcode != rpma.WCSend {
		return cErr("Received unexpected type of operation (%d != %d)", wc[0].Opcode, rpma.WCSend)
	}
	return nil
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
