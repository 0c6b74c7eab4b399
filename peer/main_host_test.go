package peer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// TestArgumentErrors holds on any host: bad input is refused before
// anything reaches the verbs layer.
func TestArgumentErrors(t *testing.T) {
	_, err := peer.DeviceForAddress("", rpma.IbvContextLocal)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = peer.DeviceForAddress("192.0.2.1", rpma.UtilIbvContextType(7))
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = peer.New(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = peer.ListenDevice(context.Background(), "")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = peer.DialDevice(context.Background(), "")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	// A ctx that has ended is refused before any librdmacm call.
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = peer.DialDevice(canceled, "192.0.2.1")
	require.ErrorIs(t, err, context.Canceled)
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	_, err = peer.ListenDevice(expired, "192.0.2.1")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	var d *peer.Device
	var p *peer.Peer
	require.NoError(t, d.Close())
	require.NoError(t, p.Close())
	require.Empty(t, d.Name())
	_, err = d.ODPCapable()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.False(t, p.NativeAtomicWrite())
	require.False(t, p.NativeFlush())
	require.False(t, p.ODP())
	require.Nil(t, p.Device())
}
