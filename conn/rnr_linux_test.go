//go:build linux && cgo

package conn_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationRNRRetryCountBoundsTheOtherSide: RNRRetryCount is what a
// side asks of the other side's sends (rdma_cm carries it in the
// handshake), not a bound on its own, as conn.Config says.
func TestIntegrationRNRRetryCountBoundsTheOtherSide(t *testing.T) {
	rnr := func(n int) *conn.Config {
		cfg := conn.DefaultConfig()
		cfg.RNRRetryCount = n
		return cfg
	}
	t.Run("receiver asks for 2", func(t *testing.T) {
		// The client sends to a server that posted no receive and asked
		// for 2 RNR retries: the send fails with RNR_RETRY_EXC_ERR.
		p, ip := newPeer(t)
		e := listen(t, p, ip)
		client, _ := pairCfg(t, p, e, ip, nil, rnr(2), nil)
		src, _ := region(t, p, 64, mr.UsageSend)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		err := client.SendWait(ctx, src, 0, 8)
		t.Logf("the send ended after %v: %v", time.Since(start), err)
		require.ErrorIs(t, err, &rpma.WCError{Status: rpma.WCRNRRetryExcErr})
	})
	t.Run("sender asks for 2", func(t *testing.T) {
		// The client asked for 2 and the server for the default (7, for
		// ever): the client's send keeps being retried until the server
		// posts a receive, then completes.
		p, ip := newPeer(t)
		e := listen(t, p, ip)
		client, server := pairCfg(t, p, e, ip, rnr(2), nil, nil)
		src, srcMem := region(t, p, 64, mr.UsageSend)
		dst, dstMem := region(t, p, 64, mr.UsageRecv)
		copy(srcMem, "retried!")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sent := make(chan error, 1)
		go func() { sent <- client.SendWait(ctx, src, 0, 8) }()
		select {
		case err := <-sent:
			t.Fatalf("the send ended with no receive posted (RNRRetryCount bounded its own side): %v", err)
		case <-time.After(3 * time.Second): // 2 retries end within 1.5 s on rxe
		}
		wc, err := server.RecvWait(ctx, dst, 0, 8)
		require.NoError(t, err)
		require.NoError(t, <-sent, "the send, retried until the receive was posted")
		require.EqualValues(t, 8, wc.ByteLen)
		require.Equal(t, "retried!", string(dstMem[:8]))
	})
}
