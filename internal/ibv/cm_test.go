package ibv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCMEventTypeString(t *testing.T) {
	require.Equal(t, "RDMA_CM_EVENT_ADDR_RESOLVED", EventAddrResolved.String())
	require.Equal(t, "RDMA_CM_EVENT_CONNECT_REQUEST", EventConnectRequest.String())
	require.Equal(t, "RDMA_CM_EVENT_ESTABLISHED", EventEstablished.String())
	require.Equal(t, "RDMA_CM_EVENT_TIMEWAIT_EXIT", EventTimewaitExit.String())
	require.Equal(t, "CMEventType(16)", CMEventType(16).String())
	require.Equal(t, "CMEventType(-1)", CMEventType(-1).String())
	for typ := EventAddrResolved; typ <= EventTimewaitExit; typ++ {
		require.NotEmpty(t, cmEventNames[typ], "%d", int(typ))
	}
}

func TestAddrInfoError(t *testing.T) {
	e := &AddrInfoError{Code: -2, Msg: "Name or service not known"}
	require.Equal(t, "rdma_getaddrinfo: Name or service not known", e.Error())
}

func TestCallError(t *testing.T) {
	err := callError("ibv_poll_cq", 0)
	require.EqualError(t, err, "ibv_poll_cq: input/output error", "no errno becomes EIO")
}
