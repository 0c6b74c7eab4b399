package rdmatest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// EnvWithoutIPCLock is "1" in the environment of the child that
// RunWithoutIPCLock starts.
const EnvWithoutIPCLock = "RPMA_TEST_WITHOUT_IPC_LOCK"

// WithoutIPCLock reports whether this process is a child started by
// RunWithoutIPCLock.
func WithoutIPCLock() bool { return os.Getenv(EnvWithoutIPCLock) == "1" }

// RunWithoutIPCLock runs the test binary again with CAP_IPC_LOCK dropped
// (setpriv, util-linux) and EnvWithoutIPCLock set, running only the test
// named helper, and fails t unless the child succeeds and prints marker
// (so that a helper that returned early does not pass). The VM runs tests
// as root, whose capability lifts RLIMIT_MEMLOCK: the child meets the
// limit as a non-root user would.
func RunWithoutIPCLock(t *testing.T, helper, marker string) {
	t.Helper()
	SkipIfNoRDMA(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) drops CAP_IPC_LOCK for the child: %v", err)
	}
	cmd := exec.Command(setpriv, "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock", "--",
		os.Args[0], "-test.run=^"+helper+"$", "-test.v")
	cmd.Env = append(os.Environ(), EnvWithoutIPCLock+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("the child without CAP_IPC_LOCK: %v", err)
	}
	if !strings.Contains(string(out), marker) {
		t.Fatalf("the child did not print %q: it did not run its checks", marker)
	}
}
