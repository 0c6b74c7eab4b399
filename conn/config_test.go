package conn_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/rpma"
)

func TestDefaultConfig(t *testing.T) {
	// librpma's defaults (src/conn_cfg.c), plus librpma's fixed retry
	// counts made configurable.
	require.Equal(t, &conn.Config{
		Timeout:           1000 * time.Millisecond,
		CQSize:            10,
		RCQSize:           0,
		SQSize:            10,
		RQSize:            10,
		SharedCompChannel: false,
		RetryCount:        7,
		RNRRetryCount:     7,
		SpinLimit:         50 * time.Microsecond,
	}, conn.DefaultConfig())
	require.NoError(t, conn.DefaultConfig().Validate())
	require.NoError(t, (*conn.Config)(nil).Validate(), "nil means the defaults")

	a, b := conn.DefaultConfig(), conn.DefaultConfig()
	a.CQSize = 99
	require.Equal(t, 10, b.CQSize, "each call returns a new Config")

	require.Equal(t, 56, conn.MaxConnectPrivateData)
	require.Equal(t, 196, conn.MaxAcceptPrivateData)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mod   func(*conn.Config)
		field string // "" = valid
	}{
		{"defaults", func(*conn.Config) {}, ""},
		{"timeout 1ms", func(c *conn.Config) { c.Timeout = time.Millisecond }, ""},
		{"timeout max", func(c *conn.Config) { c.Timeout = math.MaxInt32 * time.Millisecond }, ""},
		{"timeout 0 means the default", func(c *conn.Config) { c.Timeout = 0 }, ""},
		{"timeout negative", func(c *conn.Config) { c.Timeout = -time.Second }, "Timeout"},
		{"timeout sub-millisecond", func(c *conn.Config) { c.Timeout = time.Microsecond }, "Timeout"},
		{"timeout too long", func(c *conn.Config) { c.Timeout = (math.MaxInt32 + 1) * time.Millisecond }, "Timeout"},
		{"cq 1", func(c *conn.Config) { c.CQSize = 1 }, ""},
		{"cq 0 means the default", func(c *conn.Config) { c.CQSize = 0 }, ""},
		{"cq NoQueue: a connection needs its CQ", func(c *conn.Config) { c.CQSize = conn.NoQueue }, "CQSize"},
		{"cq negative", func(c *conn.Config) { c.CQSize = -2 }, "CQSize"},
		{"cq too big", func(c *conn.Config) { c.CQSize = math.MaxInt32 + 1 }, "CQSize"},
		{"rcq 0 means none", func(c *conn.Config) { c.RCQSize = 0 }, ""},
		{"rcq NoQueue means none", func(c *conn.Config) { c.RCQSize = conn.NoQueue }, ""},
		{"rcq 5", func(c *conn.Config) { c.RCQSize = 5 }, ""},
		{"rcq negative", func(c *conn.Config) { c.RCQSize = -2 }, "RCQSize"},
		{"sq 0 means the default", func(c *conn.Config) { c.SQSize = 0 }, ""},
		{"sq NoQueue", func(c *conn.Config) { c.SQSize = conn.NoQueue }, ""},
		{"sq negative", func(c *conn.Config) { c.SQSize = -5 }, "SQSize"},
		{"sq too big", func(c *conn.Config) { c.SQSize = math.MaxInt32 + 1 }, "SQSize"},
		{"rq 0 means the default", func(c *conn.Config) { c.RQSize = 0 }, ""},
		{"rq NoQueue", func(c *conn.Config) { c.RQSize = conn.NoQueue }, ""},
		{"rq negative", func(c *conn.Config) { c.RQSize = -2 }, "RQSize"},
		{"shared channel", func(c *conn.Config) { c.SharedCompChannel = true }, ""},
		{"retry 0 means the default", func(c *conn.Config) { c.RetryCount = 0 }, ""},
		{"retry NoRetries", func(c *conn.Config) { c.RetryCount = conn.NoRetries }, ""},
		{"retry 8", func(c *conn.Config) { c.RetryCount = 8 }, "RetryCount"},
		{"retry negative", func(c *conn.Config) { c.RetryCount = -2 }, "RetryCount"},
		{"rnr 0 means the default", func(c *conn.Config) { c.RNRRetryCount = 0 }, ""},
		{"rnr NoRetries", func(c *conn.Config) { c.RNRRetryCount = conn.NoRetries }, ""},
		{"rnr 8", func(c *conn.Config) { c.RNRRetryCount = 8 }, "RNRRetryCount"},
		{"rnr negative", func(c *conn.Config) { c.RNRRetryCount = -2 }, "RNRRetryCount"},
		{"peer timeout too short", func(c *conn.Config) { c.PeerTimeout = time.Millisecond }, "PeerTimeout"},
		{"peer timeout negative", func(c *conn.Config) { c.PeerTimeout = -time.Second }, "PeerTimeout"},
		{"ack timeout negative", func(c *conn.Config) { c.AckTimeout = -time.Millisecond }, "AckTimeout"},
		{"establish timeout 0 means the default", func(c *conn.Config) { c.EstablishTimeout = 0 }, ""},
		{"establish timeout NoEstablishTimeout", func(c *conn.Config) { c.EstablishTimeout = conn.NoEstablishTimeout }, ""},
		{"establish timeout 1s", func(c *conn.Config) { c.EstablishTimeout = time.Second }, ""},
		{"establish timeout too short", func(c *conn.Config) { c.EstablishTimeout = time.Millisecond }, "EstablishTimeout"},
		{"establish timeout negative", func(c *conn.Config) { c.EstablishTimeout = -time.Second }, "EstablishTimeout"},
		{"establish timeout too long", func(c *conn.Config) { c.EstablishTimeout = 2 * time.Hour }, "EstablishTimeout"},
	} {
		for _, from := range []struct {
			name string
			new  func() *conn.Config
		}{{"DefaultConfig", conn.DefaultConfig}, {"literal", func() *conn.Config { return &conn.Config{} }}} {
			t.Run(tc.name+"/"+from.name, func(t *testing.T) {
				c := from.new()
				tc.mod(c)
				err := c.Validate()
				if tc.field == "" {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, rpma.ErrInvalidArgument)
				require.Contains(t, err.Error(), tc.field+" ")
			})
		}
	}

	// A literal names only the fields it cares about (the case).
	require.NoError(t, (&conn.Config{PeerTimeout: time.Second}).Validate())
	require.NoError(t, (&conn.Config{}).Validate(), "the zero Config: the defaults")
	// An out-of-range value is named as the user gave it, with what 0
	// and the explicit spelling mean.
	err := (&conn.Config{RetryCount: -2}).Validate()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorContains(t, err, "RetryCount -2 out of range [1, 7] (0: the default, 7; NoRetries: 0)")
}

// TestArgumentErrors: bad input is refused before anything reaches the
// verbs layer, so these hold on any host, with or without RDMA or cgo.
func TestArgumentErrors(t *testing.T) {
	ctx := context.Background()
	_, err := conn.NewRequest(ctx, nil, "192.0.2.1", "7204", nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	var c *conn.Conn
	_, err = c.NextEvent(ctx)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, c.Disconnect(), rpma.ErrInvalidArgument)
	require.NoError(t, c.Close())
	require.Equal(t, -1, c.EventFD())
	require.Nil(t, c.CQ())
	require.Nil(t, c.RCQ())
	require.Nil(t, c.PrivateData())
	require.Zero(t, c.QPNum())

	var r *conn.ConnReq
	_, err = r.Connect(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.NoError(t, r.Close())
	require.NoError(t, r.Reject())
	require.Nil(t, r.PrivateData())
}
