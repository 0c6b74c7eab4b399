package ep

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/internal/core"
)

// TestParams guards params, the field-by-field copy of conn.Config into
// core's ConnParams (conn.Config.params has the same copy, guarded by
// conn's TestConfigParams): the two structs have the same fields in the
// same order, and a Config whose every field holds a value of its own
// (non-zero, and no two alike) arrives in the params field for field, so
// a field added to conn.Config but not copied here, or copied into the
// wrong field, fails.
func TestParams(t *testing.T) {
	ct, pt := reflect.TypeFor[conn.Config](), reflect.TypeFor[core.ConnParams]()
	require.Equal(t, ct.NumField(), pt.NumField(), "conn.Config and core.ConnParams have the same fields")
	for i := range ct.NumField() {
		require.Equal(t, ct.Field(i).Name, pt.Field(i).Name, "field %d", i)
	}

	var c conn.Config
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

	p := params(&c)
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

	require.Nil(t, params(nil), "nil stays nil: the defaults")
}
