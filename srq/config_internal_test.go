package srq

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/core"
)

// TestConfigZeroValues: the sizes New creates an SRQ with (the core
// params after core.ResolveSRQParams, New's path) for a Config with one
// field set: that field as given, or as NoRCQ says, and the defaults for
// the other.
func TestConfigZeroValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *Config
		want core.SRQParams
	}{
		{"nil", nil, core.SRQParams{RQSize: 20, RCQSize: 20}},
		{"zero", &Config{}, core.SRQParams{RQSize: 20, RCQSize: 20}},
		{"DefaultConfig", DefaultConfig(), core.SRQParams{RQSize: 20, RCQSize: 20}},
		{"RQSize", &Config{RQSize: 8}, core.SRQParams{RQSize: 8, RCQSize: 20}},
		{"RCQSize", &Config{RCQSize: 4}, core.SRQParams{RQSize: 20, RCQSize: 4}},
		{"NoRCQ", &Config{RCQSize: NoRCQ}, core.SRQParams{RQSize: 20, RCQSize: 0}},
		{"both", &Config{RQSize: 2, RCQSize: NoRCQ}, core.SRQParams{RQSize: 2, RCQSize: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := core.ResolveSRQParams("srq_new", tc.cfg.params())
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	require.Nil(t, (*Config)(nil).params(), "nil stays nil: the defaults")
}
