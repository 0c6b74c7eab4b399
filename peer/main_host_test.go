package peer_test

import (
	"testing"

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
