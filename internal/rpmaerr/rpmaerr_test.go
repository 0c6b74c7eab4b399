package rpmaerr_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

func TestConstructors(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want rpma.OpError
		msg  string
	}{
		{"New", rpmaerr.New("ibv_reg_mr", rpma.CodeProvider, syscall.EOPNOTSUPP, "maybe FsDAX needs %s", "ODP"),
			rpma.OpError{Op: "ibv_reg_mr", Code: rpma.CodeProvider, Errno: syscall.EOPNOTSUPP, Msg: "maybe FsDAX needs ODP"},
			"rpma: ibv_reg_mr: Provider error occurred: operation not supported (maybe FsDAX needs ODP)"},
		{"Provider", rpmaerr.Provider("ibv_alloc_pd", syscall.ENOMEM),
			rpma.OpError{Op: "ibv_alloc_pd", Code: rpma.CodeProvider, Errno: syscall.ENOMEM},
			"rpma: ibv_alloc_pd: Provider error occurred: cannot allocate memory"},
		{"Inval", rpmaerr.Inval("mr_reg", "usage %#x has unknown bits", 0x100),
			rpma.OpError{Op: "mr_reg", Code: rpma.CodeInval, Msg: "usage 0x100 has unknown bits"},
			"rpma: mr_reg: Invalid argument (usage 0x100 has unknown bits)"},
		{"NoSupp", rpmaerr.NoSupp("y", "type %v", rpma.FlushPersistent),
			rpma.OpError{Op: "y", Code: rpma.CodeNoSupp, Msg: "type RPMA_FLUSH_TYPE_PERSISTENT"},
			"rpma: y: Not supported (type RPMA_FLUSH_TYPE_PERSISTENT)"},
		{"no detail", rpmaerr.NoSupp("flush", ""),
			rpma.OpError{Op: "flush", Code: rpma.CodeNoSupp},
			"rpma: flush: Not supported"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var oe *rpma.OpError
			require.ErrorAs(t, tt.err, &oe)
			require.Equal(t, tt.want, *oe)
			require.Equal(t, tt.msg, tt.err.Error())
		})
	}
}
