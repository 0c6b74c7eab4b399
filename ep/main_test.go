package ep_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/rpma"
)

// helpers are programs the test binary runs instead of its tests when
// started with helperEnv naming one (a test's second process).
var helpers = map[string]func() int{}

const helperEnv = "RPMA_EP_TEST_HELPER"

func TestMain(m *testing.M) {
	if h, ok := helpers[os.Getenv(helperEnv)]; ok {
		os.Exit(h())
	}
	leak.Main(m)
}

// TestArgumentErrors holds on any host: bad input is refused before
// anything reaches the verbs layer.
func TestArgumentErrors(t *testing.T) {
	_, err := ep.Listen(nil, "192.0.2.1", "0")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	var e *ep.Endpoint
	_, err = e.NextConnReq(context.Background(), nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.NoError(t, e.Shutdown())
	require.NoError(t, e.Close())
	require.Equal(t, -1, e.FD())
	require.Empty(t, e.Port())
	require.False(t, e.Addr().IsValid())

	_, err = (&ep.Config{Backlog: -1}).Listen(nil, "192.0.2.1", "0")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorContains(t, err, "Backlog")
	_, err = (&ep.Config{MaxUndecided: -1}).Listen(nil, "192.0.2.1", "0")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorContains(t, err, "MaxUndecided")
	_, err = (&ep.Config{MaxEstablishing: -1}).Listen(nil, "192.0.2.1", "0")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorContains(t, err, "MaxEstablishing")
	require.Zero(t, e.Undecided())
	require.Zero(t, e.Establishing())
	require.Zero(t, e.Refused())

	bad := conn.DefaultConfig()
	bad.SQSize = -2 // -1 is conn.NoQueue
	_, err = (&ep.Endpoint{}).NextConnReq(context.Background(), bad)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "the config is checked before waiting")
}
