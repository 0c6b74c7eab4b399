package srq_test

import (
	"math"
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

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   *srq.Config
		field string // "" = valid
	}{
		{"nil", nil, ""},
		{"zero", &srq.Config{}, ""},
		{"defaults", srq.DefaultConfig(), ""},
		{"rq only", &srq.Config{RQSize: 8}, ""},
		{"rcq only", &srq.Config{RCQSize: 8}, ""},
		{"no rcq", &srq.Config{RCQSize: srq.NoRCQ}, ""},
		{"rq NoRCQ: an SRQ needs receives", &srq.Config{RQSize: srq.NoRCQ}, "RQSize"},
		{"rq negative", &srq.Config{RQSize: -2}, "RQSize"},
		{"rq too big", &srq.Config{RQSize: math.MaxInt32 + 1}, "RQSize"},
		{"rcq negative", &srq.Config{RCQSize: -2}, "RCQSize"},
		{"rcq too big", &srq.Config{RCQSize: math.MaxInt32 + 1}, "RCQSize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, rpma.ErrInvalidArgument)
			require.Contains(t, err.Error(), tc.field+" ")
			// New checks the sizes before the peer: the same error.
			_, nerr := srq.New(nil, tc.cfg)
			require.ErrorIs(t, nerr, rpma.ErrInvalidArgument)
			require.Contains(t, nerr.Error(), tc.field+" ")
		})
	}
	err := (&srq.Config{RCQSize: -2}).Validate()
	require.ErrorContains(t, err, "RCQSize -2 out of range [1, 2147483647] (0: the default, 20; NoRCQ: no receive CQ)")
}
