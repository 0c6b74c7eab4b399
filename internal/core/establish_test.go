package core

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// TestEstablishBound: which bound an accepted connection gets, and from
// which field, for each way a Config can say it.
func TestEstablishBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		prm   ConnParams
		d     time.Duration
		field string
	}{
		{"default", ConnParams{}, DefaultEstablishTimeout, "EstablishTimeout"},
		{"peer timeout", ConnParams{PeerTimeout: 2 * time.Second}, 2 * time.Second, "PeerTimeout"},
		{"own", ConnParams{EstablishTimeout: 5 * time.Second}, 5 * time.Second, "EstablishTimeout"},
		{"own over peer timeout", ConnParams{EstablishTimeout: 5 * time.Second, PeerTimeout: time.Second}, 5 * time.Second, "EstablishTimeout"},
		{"none", ConnParams{EstablishTimeout: NoEstablishTimeout, PeerTimeout: time.Second}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, field := tc.prm.establishBound()
			require.Equal(t, tc.d, d)
			require.Equal(t, tc.field, field)
		})
	}
	err := error(&establishTimeoutError{d: 30 * time.Second, field: "EstablishTimeout"})
	require.EqualError(t, err, "the other side did not complete the handshake within 30s (conn.Config.EstablishTimeout)")
	require.True(t, errors.Is(err, rpma.ErrPeerTimeout))
}
