package misuse_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

// objects are the public object types, as nil pointers; the tests call
// every exported method on each, as a nil pointer and as a zero value.
var objects = []any{
	(*peer.Device)(nil),
	(*peer.Peer)(nil),
	(*ep.Endpoint)(nil),
	(*conn.ConnReq)(nil),
	(*conn.Conn)(nil),
	(*cq.CQ)(nil),
	(*mr.Local)(nil),
	(*mr.Remote)(nil),
	(*srq.SRQ)(nil),
	(*pmem.Region)(nil),
}

// closers may return nil on a nil or zero-value object: Close is
// nil-safe and idempotent, and a never-opened object is closed already.
var closers = map[string]bool{"Close": true, "Shutdown": true, "Dereg": true, "Reject": true}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// args returns zero arguments for m's parameters (after the receiver):
// nil pointers, slices and contexts, zero numbers. Each call therefore
// also passes a nil context where one is expected.
func args(m reflect.Type) []reflect.Value {
	var in []reflect.Value
	for i := 1; i < m.NumIn(); i++ {
		in = append(in, reflect.Zero(m.In(i)))
	}
	return in
}

// call calls method name of recv and returns its results, or the panic.
func call(recv reflect.Value, m reflect.Method) (out []reflect.Value, panicked any) {
	defer func() { panicked = recover() }()
	fn := recv.MethodByName(m.Name)
	if m.Type.IsVariadic() {
		return fn.CallSlice(args(m.Type)), nil
	}
	return fn.Call(args(m.Type)), nil
}

// checkResults applies the contract: a method that returns an error
// returns one matching rpma.ErrInvalidArgument or os.ErrClosed (closers
// may return nil); the other results are zero values, or -1 for fds.
func checkResults(name string, m reflect.Method, out []reflect.Value) []string {
	var bad []string
	for i, v := range out {
		t := v.Type()
		if t == errorType {
			err, _ := v.Interface().(error)
			switch {
			case err == nil && closers[m.Name]:
			case err == nil:
				bad = append(bad, fmt.Sprintf("%s: returned a nil error", name))
			case !errors.Is(err, rpma.ErrInvalidArgument) && !errors.Is(err, os.ErrClosed):
				bad = append(bad, fmt.Sprintf("%s: error %q matches neither rpma.ErrInvalidArgument nor os.ErrClosed", name, err))
			}
			continue
		}
		if !v.IsZero() && !(t.Kind() == reflect.Int && v.Int() == -1) {
			bad = append(bad, fmt.Sprintf("%s: result %d is %v, not a zero value", name, i, v.Interface()))
		}
	}
	return bad
}

func exercise(t *testing.T, zero bool) {
	calls, panics := 0, 0
	var bad []string
	for _, o := range objects {
		pt := reflect.TypeOf(o)
		recv := reflect.ValueOf(o)
		kind := "nil"
		if zero {
			recv = reflect.New(pt.Elem())
			kind = "zero"
		}
		for i := 0; i < pt.NumMethod(); i++ {
			m := pt.Method(i)
			name := fmt.Sprintf("(%s %s).%s", kind, pt, m.Name)
			calls++
			out, p := call(recv, m)
			if p != nil {
				panics++
				bad = append(bad, fmt.Sprintf("%s: panic: %v", name, p))
				continue
			}
			bad = append(bad, checkResults(name, m, out)...)
			// A second call (after Close, say) keeps the contract too.
			if out, p := call(recv, m); p != nil {
				bad = append(bad, fmt.Sprintf("%s (again): panic: %v", name, p))
			} else {
				bad = append(bad, checkResults(name+" (again)", m, out)...)
			}
		}
	}
	t.Logf("%d methods called on %s objects, %d panicked", calls, map[bool]string{false: "nil", true: "zero-value"}[zero], panics)
	require.Empty(t, bad, "\n%s", strings.Join(bad, "\n"))
	require.Greater(t, calls, 75, "the method list is complete")
}

// TestNilReceivers: every exported method of a nil object returns an
// error matching rpma.ErrInvalidArgument or os.ErrClosed, or a zero
// value, and never panics.
func TestNilReceivers(t *testing.T) { exercise(t, false) }

// TestZeroValues: the same for zero values (new(conn.Conn), ...), which
// behave as closed objects and never reach C.
func TestZeroValues(t *testing.T) { exercise(t, true) }

var _ = context.Background
