package cq_test

import (
	"testing"

	"github.com/gorpma/rpma/internal/rdmatest"
)

// TestIntegrationExamples runs the examples that need an RDMA device and
// checks their output (rdmatest.RunExamples).
func TestIntegrationExamples(t *testing.T) {
	rdmatest.RunExamples(t, map[string]func(){"ExampleCQ_TryWait": ExampleCQ_TryWait, "ExampleSweep": ExampleSweep})
}
