package srq_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

func TestMain(m *testing.M) { leak.Main(m) }

func TestDefaults(t *testing.T) {
	require.Equal(t, &srq.Config{RQSize: 20, RCQSize: 20}, srq.DefaultConfig(), "librpma's code, not its header's 100")
	_, err := srq.New(nil, nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	var s *srq.SRQ
	require.NoError(t, s.Close())
	require.Nil(t, s.RCQ())
	require.ErrorIs(t, s.Recv(nil, 0, 0, 1), rpma.ErrInvalidArgument)
}
