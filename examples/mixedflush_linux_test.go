//go:build linux && rpma_native_flush

package examples_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gorpma/rpma/internal/rdmatest"
)

// EnvEmulatedExamples names the directory of the examples built without
// native flush, for TestIntegrationMixedFlushBuilds (make test's
// vm-6.12-debian13 tier sets it to bin/examples).
const EnvEmulatedExamples = "RPMA_EXAMPLES_BIN_EMULATED"

// mixedFlushExamples are the examples whose client flushes into the
// server's memory (the grant example through a grant).
var mixedFlushExamples = []string{"05-flush-to-persistent", "07-atomic-write", "grant"}

// mixedPortBase: the ports of this test (the interop test uses 7400
// onwards).
const mixedPortBase = 7600

// TestIntegrationMixedFlushBuilds: a server built without native flush
// and a client built with it, and the reverse, interoperate on a device
// that flushes natively (rxe on 6.12): a region's flush usage is
// registered for flushers of both kinds (core.RegionAccess), so the
// native flush of one build and the emulated flush (an RDMA read) of the
// other both find the access they need. So does librpma 1.3's native
// client against an emulated server. (librpma 1.3's own server registers
// for native flushers only, so an emulated client cannot flush into it:
// that pairing is librpma's to fix, not run here.)
func TestIntegrationMixedFlushBuilds(t *testing.T) {
	ip := rdmatest.IP(t)
	native := os.Getenv("RPMA_EXAMPLES_BIN")
	emulated := os.Getenv(EnvEmulatedExamples)
	if native == "" || emulated == "" {
		if rdmatest.Required() {
			t.Fatalf("RPMA_EXAMPLES_BIN (native flush) and %s (emulated) must name the two builds of the examples", EnvEmulatedExamples)
		}
		t.Skipf("needs RPMA_EXAMPLES_BIN and %s", EnvEmulatedExamples)
	}
	cBins := buildInteropC(t, mixedFlushExamples...)
	pairings := []struct {
		name           string
		server, client string // a directory of Go examples, or "c"
	}{
		{"emulated-server+native-client", emulated, native},
		{"native-server+emulated-client", native, emulated},
		{"emulated-server+librpma-1.3-client", emulated, "c"},
	}
	for i, name := range mixedFlushExamples {
		e := catalogExample(t, name)
		for j, p := range pairings {
			t.Run(name+"/"+p.name, func(t *testing.T) {
				bin := func(dir, side string) string {
					if dir == "c" {
						return cBins[name+"-"+side]
					}
					return filepath.Join(dir, name+"-"+side)
				}
				runCatalogPair(t, e, ip, mixedPortBase+i*len(pairings)+j, bin(p.server, "server"), bin(p.client, "client"))
			})
		}
	}
}
