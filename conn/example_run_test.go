package conn_test

import (
	"testing"

	"github.com/gorpma/rpma/internal/rdmatest"
)

// TestIntegrationExamples runs the examples that need an RDMA device and
// checks what they print (rdmatest.RunExamples); on any host it checks
// that every example runs somewhere.
func TestIntegrationExamples(t *testing.T) {
	rdmatest.RunExamples(t, map[string]func(){
		"ExampleNewRequest":         ExampleNewRequest,
		"ExampleConn_WriteAndFlush": ExampleConn_WriteAndFlush,
		"ExampleConn_Read":          ExampleConn_Read,
		"ExampleConn_AtomicWrite":   ExampleConn_AtomicWrite,
		"ExampleConn_Send":          ExampleConn_Send,
		"ExampleConn_Wait":          ExampleConn_Wait,
		"ExampleConn_GetRecvComp":   ExampleConn_GetRecvComp,
		"ExampleConn_Grant":         ExampleConn_Grant,
		"ExampleConn_Stats":         ExampleConn_Stats,
	})
}
