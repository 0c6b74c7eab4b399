//go:build !linux || (!cgo && !rpma_fake)

package ibv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStubs(t *testing.T) {
	_, err := CreateEventChannel()
	require.ErrorIs(t, err, ErrNotSupported)
	_, err = CreateID(nil)
	require.ErrorIs(t, err, ErrNotSupported)
	_, err = GetAddrInfo("192.0.2.1", "7204", false)
	require.ErrorIs(t, err, ErrNotSupported)
	var c *Context
	_, err = c.AllocPD()
	require.ErrorIs(t, err, ErrNotSupported)
	_, err = c.CreateCompChannel()
	require.ErrorIs(t, err, ErrNotSupported)
	_, err = c.CreateCQ(10, nil, 0)
	require.ErrorIs(t, err, ErrNotSupported)
	require.Equal(t, -1, (*EventChannel)(nil).FD())
}
