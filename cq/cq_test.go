package cq_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/leak"
)

func TestMain(m *testing.M) { leak.Main(m) }

func TestNilCQ(t *testing.T) {
	var q *cq.CQ
	require.Equal(t, -1, q.FD())
	require.Zero(t, q.Size())
}
