//go:build linux && cgo && !rpma_fake

package ibv_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
)

func TestLiveObjectsWCBuf(t *testing.T) {
	before, total := ibv.LiveObjects()["rpma_wc_buf"], ibv.LiveObjectCount()
	b, err := ibv.NewWCBuf(8)
	require.NoError(t, err)
	require.Equal(t, before+1, ibv.LiveObjects()["rpma_wc_buf"])
	require.Equal(t, total+1, ibv.LiveObjectCount())
	b.Free()
	b.Free() // no-op: counted once
	require.Equal(t, before, ibv.LiveObjects()["rpma_wc_buf"])
	require.Equal(t, total, ibv.LiveObjectCount())
	for k, n := range ibv.LiveObjects() {
		require.NotZero(t, n, k)
	}
	require.Equal(t, "ibv_pd", ibv.ObjPD.String())
}
