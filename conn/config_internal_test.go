package conn

import (
	"reflect"
	"testing"

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
