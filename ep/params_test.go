package ep

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/internal/core"
)

// TestParams checks that params copies every field of conn.Config: the
// two structs have the same field names, and a Config with every field
// set comes out with every field set.
func TestParams(t *testing.T) {
	ct, pt := reflect.TypeFor[conn.Config](), reflect.TypeFor[core.ConnParams]()
	require.Equal(t, ct.NumField(), pt.NumField())
	for i := 0; i < ct.NumField(); i++ {
		require.Equal(t, ct.Field(i).Name, pt.Field(i).Name)
	}
	c := &conn.Config{Timeout: time.Second, CQSize: 1, RCQSize: 2, SQSize: 3, RQSize: 4,
		SharedCompChannel: true, RetryCount: 5, RNRRetryCount: 6, PeerTimeout: time.Second, AckTimeout: time.Millisecond,
		EstablishTimeout: time.Minute}
	p := reflect.ValueOf(*params(c))
	for i := 0; i < p.NumField(); i++ {
		if pt.Field(i).Name == "SRQ" {
			continue // a pointer to an object only a device can make
		}
		require.False(t, p.Field(i).IsZero(), "field %s not copied", pt.Field(i).Name)
	}
	require.Nil(t, params(nil))
}
