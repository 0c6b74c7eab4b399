package pmem_test

import (
	"testing"

	"github.com/gorpma/rpma/internal/rdmatest"
)

// TestExamplesRun checks that every example of the package runs: here,
// all have an Output comment (rdmatest.RunExamples).
func TestExamplesRun(t *testing.T) { rdmatest.RunExamples(t, nil) }
