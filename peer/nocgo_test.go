//go:build !linux || !cgo

package peer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// TestNotSupported: a build without cgo (or not on Linux) compiles and
// reports that RDMA is not supported, as librpma's RPMA_E_NOSUPP.
func TestNotSupported(t *testing.T) {
	_, err := peer.DeviceForAddress("192.0.2.1", rpma.IbvContextLocal)
	require.ErrorIs(t, err, rpma.ErrNotSupported)
	require.Contains(t, err.Error(), "not supported by this build")
}
