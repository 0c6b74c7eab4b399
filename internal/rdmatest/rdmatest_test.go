package rdmatest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest"
)

func runProbe(t *testing.T, env ...string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSkipIfNoRDMA$", "-test.v")
	cmd.Env = append(os.Environ(), "RDMATEST_PROBE=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSkipIfNoRDMA runs itself as a child process with a simulated host
// (RPMA_TEST_SYSFS) and checks that the child skips or fails as it must.
// In the child (RDMATEST_PROBE=1) it is the probe: it calls SkipIfNoRDMA.
func TestSkipIfNoRDMA(t *testing.T) {
	if os.Getenv("RDMATEST_PROBE") == "1" {
		rdmatest.SkipIfNoRDMA(t)
		t.Log("probe ran with RDMA")
		return
	}
	empty := t.TempDir()

	t.Run("skips without RDMA when not required", func(t *testing.T) {
		out, err := runProbe(t, rdmatest.EnvSysfs+"="+empty, rdmatest.EnvRequire+"=")
		require.NoError(t, err, out)
		require.Contains(t, out, "--- SKIP: TestSkipIfNoRDMA")
		require.Contains(t, out, "no RDMA device")
	})
	t.Run("fails without RDMA when required", func(t *testing.T) {
		out, err := runProbe(t, rdmatest.EnvSysfs+"="+empty, rdmatest.EnvRequire+"=1")
		require.Error(t, err, out)
		require.Contains(t, out, "--- FAIL: TestSkipIfNoRDMA")
		require.Contains(t, out, "RDMA required")
	})
	t.Run("fails without an address when required", func(t *testing.T) {
		dev := t.TempDir()
		require.NoError(t, os.Mkdir(dev+"/rxe0", 0o755))
		out, err := runProbe(t, rdmatest.EnvSysfs+"="+dev, rdmatest.EnvRequire+"=1", rdmatest.EnvIP+"=")
		require.Error(t, err, out)
		require.True(t, strings.Contains(out, rdmatest.EnvIP+" is not set"), out)
	})
}

// TestVMEnvironment checks what the VM promises the tests: inside it
// (RPMA_TEST_REQUIRE_RXE=1) there is a device and an address; on a plain
// host it skips.
func TestVMEnvironment(t *testing.T) {
	ip := rdmatest.IP(t)
	require.Equal(t, "192.0.2.1", ip)
	require.Contains(t, rdmatest.Devices(), "rxe0")
	require.NotEmpty(t, rdmatest.Kernel())
}
