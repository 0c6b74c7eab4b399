//go:build linux

package examples_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// cmRaceAttempts bounds the runs of one pairing of
// TestIntegrationInteropErrors whose server keeps getting CLOSED where it
// waits for ESTABLISHED (serverMissedEstablished): the third such server
// fails the test, so a library that loses ESTABLISHED every time still
// fails it.
const cmRaceAttempts = 3

// cmRaceSignature is what the servers of the examples, C (interop-common.h
// expect_event) and Go (common.ExpectEvent) alike, print when the event
// that came is CLOSED and the one they waited for is not: the only such
// wait is the one for ESTABLISHED.
const cmRaceSignature = "rpma_conn_next_event returned an unexpected event: Connection closed"

// serverMissedEstablished reports whether a server's stderr shows it got
// CLOSED where it waited for its connection's ESTABLISHED.
//
// A server whose client hangs up milliseconds after connecting can see
// that, librpma's C server with librpma's C client included (seen once in
// CI, vm-6.1, the "write" case: one failed write between connect and
// hang-up; not reproduced in 360 further runs, 300 of them with the
// guest's CPUs busy). The passive side learns that a connection is
// established from the client's RTU message, and the kernel's connection
// manager handles incoming messages on a per-CPU workqueue
// (alloc_workqueue("ib_cm", 0, 1): one at a time per CPU, not in order
// across CPUs), so the client's DREQ can be handled before its RTU; rdma_cm
// then reports DISCONNECTED for a connection it never reported
// established. Neither library can change that; the test runs such a
// pairing again, on a fresh port, up to cmRaceAttempts times.
func serverMissedEstablished(stderr string) bool {
	return strings.Contains(stderr, cmRaceSignature)
}

// TestServerMissedEstablished: the C server's stderr of the CI run that
// failed is recognised; a server that failed any other way, or that
// logged the CLOSED event it expected, is not.
func TestServerMissedEstablished(t *testing.T) {
	raced := "Dec 03 14:12:35.245892 [653] *INFO*  peer.c: 312: rpma_peer_new: Native atomic write is not supported - ordinary RDMA write will be used instead.\n" +
		"Dec 03 14:12:35.293868 [653] *NOTE*  ep.c:  98: rpma_ep_listen: Waiting for incoming connection on 192.0.2.1:7711\n" +
		"Dec 03 14:12:36.223085 [653] *NOTE*  conn.c: 211: rpma_conn_next_event: Connection closed\n" +
		"rpma_conn_next_event returned an unexpected event: Connection closed\n"
	require.True(t, serverMissedEstablished(raced))
	// the Go server's form (common.ExpectEvent's error, through common.Exit)
	require.True(t, serverMissedEstablished(fmt.Sprintf("02-read-to-volatile-server: rpma_conn_next_event returned an unexpected event: %s\n", rpma.ConnClosed)))

	for _, stderr := range []string{
		"",
		// a well-behaved run: librpma logs the CLOSED it waited for
		"Dec 03 14:12:36.223085 [653] *NOTE*  conn.c: 211: rpma_conn_next_event: Connection closed\n",
		"rpma_conn_next_event returned an unexpected event: Connection lost\n",
		"rpma_conn_next_event returned an unexpected event: Connection established\n",
		"rpma_ep_next_conn_req() failed: Provider error\n",
	} {
		require.False(t, serverMissedEstablished(stderr), "%q", stderr)
	}
}
