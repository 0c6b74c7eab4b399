// Command client is the client of example grant: it connects as each of
// <tenants> tenants in turn, receives the tenant's grant (descriptor and
// peer configuration) in a message, writes its greeting into the granted
// slot and flushes it. Then the last tenant tries the first one's grant,
// which the server's device refuses: a grant is valid only on the
// connection it was given to.
//
//	client <server_address> <port> <tenants>
//
// It prints, for two tenants:
//
//	tenant 0 wrote its slot
//	tenant 1 wrote its slot
//	tenant 1 with tenant 0's grant: remote access error
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

// The server's sizes (examples/grant/server).
const (
	slotSize     = 1024
	grantMsgSize = mr.DescriptorSize + peer.CfgDescriptorSize
)

func main() {
	common.Start(4, usage)
	common.Exit(run(os.Args[1], os.Args[2], int(common.StrtoulArg(3))))
}

// tenant is one connection and the grant it received.
type tenant struct {
	c     *conn.Conn
	grant *mr.Remote
}

func run(addr, port string, tenants int) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), common.Timeout)
	defer cancel()
	if tenants < 1 {
		return errors.New("<tenants> must be at least 1")
	}
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)
	src, closeSrc, err := common.RegDRAM(p, tenants*slotSize, mr.UsageWriteSrc)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "source", closeSrc)
	msgs, closeMsgs, err := common.RegDRAM(p, tenants*grantMsgSize, mr.UsageRecv)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "messages", closeMsgs)

	ts := make([]tenant, 0, tenants)
	defer func() {
		for _, t := range ts {
			err = errors.Join(err, common.DisconnectAndWaitForClose(ctx, t.c), t.c.Close())
		}
	}()
	for i := range tenants {
		t, err := connect(ctx, p, addr, port, msgs, i)
		if err != nil {
			return err
		}
		ts = append(ts, t)
		greeting := fmt.Sprintf("Hello from tenant %d", i)
		copy(src.Bytes()[i*slotSize:], greeting+"\x00")
		if err := writeAndFlush(ctx, t, src, i*slotSize, len(greeting)+1); err != nil {
			return err
		}
		fmt.Printf("tenant %d wrote its slot\n", i)
	}
	if tenants < 2 {
		return nil
	}
	// The last tenant with the first one's grant: the device refuses it.
	last := len(ts) - 1
	intruder := tenant{c: ts[last].c, grant: ts[0].grant}
	copy(src.Bytes()[last*slotSize:], "intruder\x00")
	err = writeAndFlush(ctx, intruder, src, last*slotSize, len("intruder")+1)
	var wcErr *rpma.WCError
	if !errors.As(err, &wcErr) || wcErr.Status != rpma.WCRemAccessErr {
		return fmt.Errorf("tenant %d wrote with tenant 0's grant: %v (want a remote access error)", last, err)
	}
	fmt.Printf("tenant %d with tenant 0's grant: %s\n", last, wcErr.Status)
	return nil
}

// connect connects as tenant i, with the receive for the grant's message
// posted before, and decodes the grant.
func connect(ctx context.Context, p *peer.Peer, addr, port string, msgs *mr.Local, i int) (tenant, error) {
	req, err := conn.NewRequest(ctx, p, addr, port, nil)
	if err != nil {
		return tenant{}, fmt.Errorf("conn.NewRequest: %w", err)
	}
	if err := req.Recv(msgs, i*grantMsgSize, grantMsgSize, uint64(i)); err != nil {
		req.Close()
		return tenant{}, fmt.Errorf("conn.ConnReq.Recv: %w", err)
	}
	c, err := common.Establish(ctx, req, nil)
	if err != nil {
		return tenant{}, err
	}
	t := tenant{c: c}
	if _, err := common.WaitAndValidate(ctx, c.CQ(), rpma.WCRecv, "rpma_recv()", common.OpcodeMsgDec); err != nil {
		c.Close()
		return tenant{}, err
	}
	b := msgs.Bytes()[i*grantMsgSize : (i+1)*grantMsgSize]
	if t.grant, err = mr.RemoteFromDescriptor(b[:mr.DescriptorSize]); err != nil {
		c.Close()
		return tenant{}, fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	pcfg, err := peer.CfgFromDescriptor(b[mr.DescriptorSize:])
	if err == nil {
		err = c.ApplyRemotePeerCfg(pcfg)
	}
	if err != nil {
		c.Close()
		return tenant{}, fmt.Errorf("the peer configuration: %w", err)
	}
	return t, nil
}

// writeAndFlush writes n bytes at off of src to the start of t's grant
// and flushes them to visibility; a failed completion is returned as its
// *rpma.WCError.
func writeAndFlush(ctx context.Context, t tenant, src *mr.Local, off, n int) error {
	if err := t.c.WriteAndFlush(t.grant, 0, src, off, n, rpma.FlushVisibility, rpma.CompletionAlways, 1); err != nil {
		return fmt.Errorf("conn.Conn.WriteAndFlush: %w", err)
	}
	wc, err := common.WaitForCompletion(ctx, t.c.CQ())
	if err != nil {
		return err
	}
	return wc.Err()
}
