package rpma_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

func TestConnEventStrings(t *testing.T) {
	// enum rpma_conn_event and rpma_utils_conn_event_2str (src/utils.c).
	for _, tt := range []struct {
		ev    rpma.ConnEvent
		value int
		str   string
	}{
		{rpma.ConnUndefined, -1, "Undefined connection event"},
		{rpma.ConnEstablished, 0, "Connection established"},
		{rpma.ConnClosed, 1, "Connection closed"},
		{rpma.ConnLost, 2, "Connection lost"},
		{rpma.ConnRejected, 3, "Connection rejected"},
		{rpma.ConnUnreachable, 4, "Connection unreachable"},
	} {
		require.Equal(t, tt.value, int(tt.ev), tt.str)
		require.Equal(t, tt.str, tt.ev.String())
	}
	for _, v := range []int{-2, 5, 100, -100000} {
		require.Equal(t, "Unsupported connection event", rpma.ConnEvent(v).String(), "value %d", v)
	}
}
