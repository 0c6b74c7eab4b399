// Command server is the server of example grant, which librpma does not
// have: one region, a slot of which is granted to each client connection
// (conn.Conn.Grant), so that no client reaches another's slot.
//
//	server <server_address> <port> <tenants>
//
// It registers <tenants> slots of 1 KiB of DRAM with mr.UsageGranted (no
// remote access of its own) for remote writes and flushes. For each
// connection it accepts, in turn, it grants that connection its slot and
// sends it the grant's message: the grant's 21-byte descriptor (librpma's
// region descriptor form, so a C librpma client decodes it with
// rpma_mr_remote_from_descriptor) and the 1-byte peer configuration
// descriptor. The grant can only be sent once the connection exists: a
// grant is bound on the connection's queue pair. When every client has
// hung up (which revokes its grant), it prints each slot:
//
//	tenant 0: Hello from tenant 0
//	tenant 1: Hello from tenant 1
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <tenants>\n"

// slotSize is the size of each tenant's slot.
const slotSize = 1024

// grantMsgSize is the grant's message: its descriptor and the peer
// configuration's.
const grantMsgSize = mr.DescriptorSize + peer.CfgDescriptorSize

func main() {
	common.Start(4, usage)
	common.Exit(run(os.Args[1], os.Args[2], int(common.StrtoulArg(3))))
}

func run(addr, port string, tenants int) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout
	if tenants < 1 {
		return errors.New("<tenants> must be at least 1")
	}
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// the slots: reachable only through grants
	slots, closeSlots, err := common.RegDRAM(p, tenants*slotSize, mr.UsageGranted|mr.UsageWriteDst|mr.UsageFlushVisibility)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "slots", closeSlots)
	msg, closeMsg, err := common.RegDRAM(p, grantMsgSize, mr.UsageSend)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "message buffer", closeMsg)
	pcfg := peer.Cfg{}.Descriptor() // DRAM: no direct write to PMem

	conns := make([]*conn.Conn, 0, tenants)
	defer func() {
		for _, c := range conns {
			err = errors.Join(err, c.Close()) // revokes its grant
		}
	}()
	for i := range tenants {
		c, err := common.ServerAccept(ctx, e, nil, nil)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := grant(ctx, c, slots, i, msg, pcfg); err != nil {
			return err
		}
	}
	// each client hangs up when it is done
	for _, c := range conns {
		if err := common.WaitForCloseAndDisconnect(ctx, c); err != nil {
			return err
		}
	}
	for i := range tenants {
		fmt.Printf("tenant %d: %s\n", i, common.CString(slots.Bytes()[i*slotSize:(i+1)*slotSize]))
	}
	return nil
}

// grant grants c slot i and sends it the grant's message.
func grant(ctx context.Context, c *conn.Conn, slots *mr.Local, i int, msg *mr.Local, pcfg [peer.CfgDescriptorSize]byte) error {
	gctx, cancel := context.WithTimeout(ctx, common.Timeout)
	defer cancel()
	g, err := c.Grant(gctx, slots, i*slotSize, slotSize, mr.UsageWriteDst|mr.UsageFlushVisibility)
	if err != nil {
		return fmt.Errorf("conn.Conn.Grant: %w", err)
	}
	d := g.Descriptor()
	b := msg.Bytes()
	copy(b, d[:])
	copy(b[mr.DescriptorSize:], pcfg[:])
	if err := c.Send(msg, 0, grantMsgSize, rpma.CompletionAlways, 0); err != nil {
		return fmt.Errorf("conn.Conn.Send: %w", err)
	}
	wc, err := common.WaitAndValidate(ctx, c.CQ(), rpma.WCSend, "rpma_send()", common.OpcodeMsgDec)
	if err != nil && wc.Status == rpma.WCWRFlushErr {
		// The tenant's connection broke before the send's
		// acknowledgement was processed: a tenant that reaches for
		// another's slot breaks its own queue pair on this side too
		// (rxe moves it to the error state, flushing what it had not
		// completed, possibly this send, whose message has arrived).
		// One tenant's broken connection must not end the others'.
		fmt.Fprintf(os.Stderr, "tenant %d: %v (its connection broke)\n", i, err)
		return nil
	}
	return err
}
