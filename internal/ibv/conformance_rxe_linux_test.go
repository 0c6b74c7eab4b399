//go:build linux && cgo && !rpma_fake

package ibv_test

import (
	"testing"

	"github.com/gorpma/rpma/internal/rdmatest"
)

// conformanceIP is the address the conformance table connects to: the
// VM's rxe device (outside the VM the table skips).
func conformanceIP(tb testing.TB) string { return rdmatest.IP(tb) }
