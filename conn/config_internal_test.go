package conn

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/core"
)

// TestConfigParams guards the field-by-field copy of Config into core's
// ConnParams (Config.params): the two structs have the same fields in the
// same order, and a Config whose every field holds a value of its own
// (non-zero, and no two alike) arrives in the params field for field, so
// a field added to Config but not copied, or copied into the wrong field,
// fails here.
func TestConfigParams(t *testing.T) {
	ct, pt := reflect.TypeFor[Config](), reflect.TypeFor[core.ConnParams]()
	require.Equal(t, ct.NumField(), pt.NumField(), "Config and core.ConnParams have the same fields")
	for i := range ct.NumField() {
		require.Equal(t, ct.Field(i).Name, pt.Field(i).Name, "field %d", i)
	}

	var c Config
	cv := reflect.ValueOf(&c).Elem()
	for i := range cv.NumField() {
		f := cv.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64: // sizes, counts, time.Duration
			f.SetInt(int64(100 + i)) // distinct, and none a default
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem())) // only its identity is copied
		default:
			t.Fatalf("field %s: kind %v: teach this test to set it", ct.Field(i).Name, f.Kind())
		}
	}

	p := c.params()
	require.NotNil(t, p)
	pv := reflect.ValueOf(p).Elem()
	for i := range cv.NumField() {
		name, want, got := ct.Field(i).Name, cv.Field(i), pv.Field(i)
		require.False(t, got.IsZero(), "field %s not copied", name)
		switch want.Kind() {
		case reflect.Pointer:
			require.Equal(t, want.UnsafePointer(), got.UnsafePointer(), "field %s", name)
		case reflect.Bool:
			require.Equal(t, want.Bool(), got.Bool(), "field %s", name)
		default:
			require.Equal(t, want.Int(), got.Int(), "field %s", name)
		}
	}

	require.Nil(t, (*Config)(nil).params(), "nil stays nil: the defaults")
}

// TestConfigZeroValues: what a request is built with (the core params
// after core.ResolveParams, the path of NewRequest and NextConnReq) for a
// Config with one field set: that field as given, or as its explicit
// spelling says, and the defaults for the others.
func TestConfigZeroValues(t *testing.T) {
	def := core.DefaultConnParams()
	with := func(mod func(*core.ConnParams)) core.ConnParams {
		p := def
		mod(&p)
		return p
	}
	resolve := func(t *testing.T, c *Config) core.ConnParams {
		t.Helper()
		p, err := core.ResolveParams("conn_cfg", c.params())
		require.NoError(t, err)
		return p
	}
	for _, tc := range []struct {
		name string
		cfg  *Config
		want core.ConnParams
	}{
		{"nil", nil, def},
		{"zero", &Config{}, def},
		{"DefaultConfig", DefaultConfig(), def},
		{"PeerTimeout", &Config{PeerTimeout: time.Second}, with(func(p *core.ConnParams) { p.PeerTimeout = time.Second })},
		{"AckTimeout", &Config{AckTimeout: time.Millisecond}, with(func(p *core.ConnParams) { p.AckTimeout = time.Millisecond })},
		{"Timeout", &Config{Timeout: 3 * time.Second}, with(func(p *core.ConnParams) { p.Timeout = 3 * time.Second })},
		{"CQSize", &Config{CQSize: 32}, with(func(p *core.ConnParams) { p.CQSize = 32 })},
		{"RCQSize", &Config{RCQSize: 8}, with(func(p *core.ConnParams) { p.RCQSize = 8 })},
		{"RCQSize NoQueue", &Config{RCQSize: NoQueue}, def},
		{"SQSize", &Config{SQSize: 4}, with(func(p *core.ConnParams) { p.SQSize = 4 })},
		{"SQSize NoQueue", &Config{SQSize: NoQueue}, with(func(p *core.ConnParams) { p.SQSize = 0 })},
		{"RQSize", &Config{RQSize: 2}, with(func(p *core.ConnParams) { p.RQSize = 2 })},
		{"RQSize NoQueue", &Config{RQSize: NoQueue}, with(func(p *core.ConnParams) { p.RQSize = 0 })},
		{"SharedCompChannel", &Config{SharedCompChannel: true}, with(func(p *core.ConnParams) { p.SharedCompChannel = true })},
		{"RetryCount", &Config{RetryCount: 2}, with(func(p *core.ConnParams) { p.RetryCount = 2 })},
		{"RetryCount NoRetries", &Config{RetryCount: NoRetries}, with(func(p *core.ConnParams) { p.RetryCount = 0 })},
		{"RNRRetryCount", &Config{RNRRetryCount: 3}, with(func(p *core.ConnParams) { p.RNRRetryCount = 3 })},
		{"RNRRetryCount NoRetries", &Config{RNRRetryCount: NoRetries}, with(func(p *core.ConnParams) { p.RNRRetryCount = 0 })},
		{"SpinLimit", &Config{SpinLimit: time.Microsecond}, with(func(p *core.ConnParams) { p.SpinLimit = time.Microsecond })},
		{"SpinLimit NoSpin", &Config{SpinLimit: NoSpin}, with(func(p *core.ConnParams) { p.SpinLimit = 0 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, resolve(t, tc.cfg))
		})
	}

	// A DefaultConfig adjusted as before this change keeps its values,
	// however many fields it changes.
	c := DefaultConfig()
	c.SQSize, c.RQSize, c.CQSize, c.RCQSize, c.RetryCount = 4, 2, 32, 8, 2
	require.Equal(t, core.ConnParams{Timeout: time.Second, CQSize: 32, RCQSize: 8, SQSize: 4, RQSize: 2,
		RetryCount: 2, RNRRetryCount: 7, SpinLimit: DefaultSpinLimit}, resolve(t, c))

	// Every explicit spelling at once: none is mistaken for another.
	c = &Config{RCQSize: NoQueue, SQSize: NoQueue, RQSize: NoQueue, RetryCount: NoRetries, RNRRetryCount: NoRetries, SpinLimit: NoSpin}
	require.Equal(t, core.ConnParams{Timeout: time.Second, CQSize: 10}, resolve(t, c))
}

// TestDefaultConfigParams guards DefaultConfig, the other field-by-field
// copy of config.go (core.DefaultConnParams into a Config): what it
// returns is core's defaults exactly, field for field, before any
// resolution. TestConfigZeroValues cannot see a forgotten field here,
// since a zero field resolves to its default anyway; a reader of
// DefaultConfig would see the zero.
func TestDefaultConfigParams(t *testing.T) {
	require.Equal(t, core.DefaultConnParams(), *DefaultConfig().params())
}
