package rdmatest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/gorpma/rpma/internal/cbuild"
)

// LibrpmaProgram compiles src, a C program on librpma (Debian's
// librpma-dev), or takes it from the cache of C builds (internal/cbuild),
// and returns the binary's path. Without cc or librpma.h it skips the test
// on a host and fails it where the device is required.
func LibrpmaProgram(t testing.TB, src string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err == nil {
		_, err = os.Stat("/usr/include/librpma.h")
	}
	if err != nil {
		if Required() {
			t.Fatalf("the test environment must have cc and librpma-dev: %v", err)
		}
		t.Skip("needs cc and librpma-dev")
	}
	bin, _, err := cbuild.Build(context.Background(), cc, cbuild.Program{Name: "p", Source: src, Libs: []string{"-lrpma"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
