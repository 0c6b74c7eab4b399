package cq_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/rpma"
)

func TestMain(m *testing.M) { leak.Main(m) }

func TestNilCQ(t *testing.T) {
	var q *cq.CQ
	require.Equal(t, -1, q.FD())
	require.Zero(t, q.Size())
	for _, wc := range [][]cq.WC{nil, make([]cq.WC, 2)} {
		n, err := q.GetWC(wc)
		require.Zero(t, n)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		require.ErrorContains(t, err, "CQ is nil")
	}
}
