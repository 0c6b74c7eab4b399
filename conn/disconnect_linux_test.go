//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationDisconnectFlushesOutstanding: what Conn.Disconnect says
// about outstanding operations. A send to a side that never posts a
// receive is retried for good (an RNR retry count of 7 means forever), so
// it stays outstanding: it does not complete while the connection is up,
// nor when the other side disconnects (this side reads CLOSED), and it
// comes back as a flush error, with its op context, once this side's
// Disconnect has moved the QP to the error state.
func TestIntegrationDisconnectFlushesOutstanding(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, server := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)
	src, _ := region(t, p, 4096, mr.UsageSend)

	require.NoError(t, client.Send(src, 0, 64, rpma.CompletionAlways, 42))
	none := func(when string) {
		t.Helper()
		time.Sleep(500 * time.Millisecond)
		var wc [1]cq.WC
		_, err := client.CQ().GetWC(wc[:])
		require.ErrorIs(t, err, rpma.ErrNoCompletion, "%s: the send completed: %+v", when, wc[0])
	}
	none("while the connection is up")

	// The other side hangs up: this side reads CLOSED, the send is still
	// outstanding.
	require.NoError(t, server.Disconnect())
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
	none("after the other side's disconnect")

	// This side's Disconnect flushes it.
	require.NoError(t, client.Disconnect())
	deadline := time.Now().Add(10 * time.Second)
	var wc [1]cq.WC
	for {
		n, err := client.CQ().GetWC(wc[:])
		if n == 1 {
			break
		}
		require.ErrorIs(t, err, rpma.ErrNoCompletion)
		require.True(t, time.Now().Before(deadline), "no completion within 10 s of Disconnect")
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		err = client.CQ().Wait(wctx)
		cancel()
		var ce *rpma.ConnEventError
		switch {
		case errors.As(err, &ce): // the CLOSED read above: poll again
			time.Sleep(10 * time.Millisecond)
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			require.NoError(t, err)
		}
	}
	require.Equal(t, uint64(42), wc[0].OpContext)
	require.ErrorIs(t, wc[0].Err(), rpma.ErrWRFlushed)
	t.Logf("after Disconnect: %v", wc[0].Err())
}
