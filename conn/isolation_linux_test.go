//go:build linux && cgo

package conn_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationPeerIsolation: two Peers on one device are two
// protection domains (doc/security.md, "one Peer per trust domain"). A
// client connected through tenant B's endpoint that holds tenant A's
// region descriptor gets a remote access error for a write and for a read,
// and A's bytes neither change nor reach it. The control: the same client
// peer, connected through A's endpoint, writes and reads the region with
// the same descriptor.
func TestIntegrationPeerIsolation(t *testing.T) {
	pa, ip := newPeer(t)
	pb, _ := newPeer(t)
	ea, eb := listen(t, pa, ip), listen(t, pb, ip)
	regionA, memA := region(t, pa, 4096, mr.UsageWriteDst|mr.UsageReadSrc)
	for i := range memA {
		memA[i] = 0xAA
	}
	descA := remoteOf(t, regionA)

	client, _ := newPeer(t)
	src, srcMem := region(t, client, 4096, mr.UsageWriteSrc|mr.UsageReadDst)
	ctx := testCtx(t)

	// Through B: refused by A's protection domain.
	cb, _ := pairCfg(t, client, eb, ip, nil, nil, nil)
	for i := range srcMem {
		srcMem[i] = 0x55
	}
	require.NoError(t, cb.Write(descA, 0, src, 0, 64, rpma.CompletionAlways, 1))
	wc := nextWC(t, ctx, cb.CQ())
	require.ErrorIs(t, wc.Err(), &rpma.WCError{Status: rpma.WCRemAccessErr}, "a write with another Peer's rkey")
	require.Equal(t, bytes.Repeat([]byte{0xAA}, len(memA)), memA, "tenant A's bytes changed")

	cb2, _ := pairCfg(t, client, eb, ip, nil, nil, nil)
	clear(srcMem)
	require.NoError(t, cb2.Read(src, 0, descA, 0, 64, rpma.CompletionAlways, 2))
	wc = nextWC(t, ctx, cb2.CQ())
	require.ErrorIs(t, wc.Err(), &rpma.WCError{Status: rpma.WCRemAccessErr}, "a read with another Peer's rkey")
	require.NotContains(t, srcMem[:64], byte(0xAA), "tenant A's bytes reached the client")

	// Control: through A, the same descriptor works.
	ca, _ := pairCfg(t, client, ea, ip, nil, nil, nil)
	for i := range srcMem {
		srcMem[i] = 0x55
	}
	require.NoError(t, ca.Write(descA, 0, src, 0, 64, rpma.CompletionAlways, 3))
	okWC(t, ctx, ca.CQ(), rpma.WCRDMAWrite, 3)
	require.Equal(t, bytes.Repeat([]byte{0x55}, 64), memA[:64], "the control write did not arrive")
	clear(srcMem)
	require.NoError(t, ca.Read(src, 0, descA, 64, 64, rpma.CompletionAlways, 4))
	okWC(t, ctx, ca.CQ(), rpma.WCRDMARead, 4)
	require.Equal(t, bytes.Repeat([]byte{0xAA}, 64), srcMem[:64], "the control read did not return A's bytes")
}
