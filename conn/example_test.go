package conn_test

import (
	"context"
	"encoding/binary"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// A ping-pong loop on an established connection with separate send and
// receive CQs (Config.RCQSize > 0), written with GetSendComp and
// GetRecvComp: each call returns exactly one completion, blocking in Go's
// runtime poller until it arrives. buf is registered with
// mr.UsageSend|mr.UsageRecv; the message is a counter in its first 8
// bytes, the reply lands at offset 8. It needs an RDMA device, so it is
// compiled but not run.
func ExampleConn_GetRecvComp() {
	var (
		ctx = context.Background()
		c   *conn.Conn    // established, built with Config.RCQSize > 0
		buf *mr.Local     // registered with mr.UsageSend|mr.UsageRecv
		mem = buf.Bytes() // its memory
	)
	for i := uint64(0); i < 1000; i++ {
		// The reply's receive first, so that it is there when it comes.
		if err := c.Recv(buf, 8, 8, i); err != nil {
			return
		}
		binary.LittleEndian.PutUint64(mem, i)
		if err := c.Send(buf, 0, 8, rpma.CompletionAlways, i); err != nil {
			return
		}
		if _, err := c.GetSendComp(ctx); err != nil { // the send is done
			return
		}
		wc, err := c.GetRecvComp(ctx) // the reply is in mem[8:16]
		if err != nil || wc.OpContext != i {
			return
		}
		_ = binary.LittleEndian.Uint64(mem[8:])
	}
}
