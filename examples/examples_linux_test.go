//go:build linux

package examples_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/examples/internal/catalog"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// TestIntegrationExamples runs every bundled example pair on the VM's rxe
// device, as make demo does, and checks what each server read or received
// against what its client sent. The binaries come from
// scripts/build-examples.sh (make test builds them), in
// $RPMA_EXAMPLES_BIN or ../bin/examples.
func TestIntegrationExamples(t *testing.T) {
	ip := rdmatest.IP(t)
	dir := os.Getenv("RPMA_EXAMPLES_BIN")
	if dir == "" {
		dir = "../bin/examples"
	}
	dir, err := filepath.Abs(dir)
	require.NoError(t, err)
	env := &catalog.Env{Dir: dir, Addr: ip, Port: 7304, PMem: os.Getenv(rdmatest.EnvPMem),
		PMemMode: os.Getenv(rdmatest.EnvPMemMode), Out: testWriter{t}}
	for i, e := range catalog.All() {
		t.Run(e.Name, func(t *testing.T) {
			require.True(t, e.Available(env), "%s is not built: run scripts/build-examples.sh", e.Name)
			r := e.Run(env, i)
			require.NoError(t, r.Err, "server:\n%s\nclient:\n%s", r.Server, r.Client)
		})
	}
}

// testWriter sends the examples' output to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}
