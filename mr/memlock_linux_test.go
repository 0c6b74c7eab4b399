//go:build linux && cgo

package mr_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationRegMemlock: a process without CAP_IPC_LOCK may pin only
// RLIMIT_MEMLOCK bytes, and a registration beyond it fails (the kernel's
// ENOMEM) with an error that names the limit and the capability. The VM
// runs tests as root, so the test runs itself again with CAP_IPC_LOCK
// dropped (setpriv, util-linux) and a 1 MiB limit, as a non-root user
// would have.
func TestIntegrationRegMemlock(t *testing.T) {
	rdmatest.RunWithoutIPCLock(t, "TestHelperRegMemlock", "MEMLOCK CHECKED")
}

// TestHelperRegMemlock is the child of TestIntegrationRegMemlock.
func TestHelperRegMemlock(t *testing.T) {
	if !rdmatest.WithoutIPCLock() {
		t.Log("the child of TestIntegrationRegMemlock")
		return
	}
	const limit = 1 << 20
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: limit, Max: limit}))
	p, _ := newPeer(t)
	r, err := pmem.Alloc(16 << 20)
	require.NoError(t, err)
	defer r.Close()

	small, err := mr.Reg(p, r.Bytes()[:64<<10], mr.UsageWriteDst)
	require.NoError(t, err, "64 KiB fit the limit")
	require.NoError(t, small.Dereg())

	_, err = mr.Reg(p, r.Bytes(), mr.UsageWriteDst)
	require.Error(t, err, "16 MiB beyond a 1 MiB limit without CAP_IPC_LOCK")
	t.Logf("registration beyond the limit: %v", err)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.ENOMEM)
	for _, s := range []string{"RLIMIT_MEMLOCK", "1048576", "CAP_IPC_LOCK", "16777216"} {
		require.True(t, strings.Contains(err.Error(), s), "the error names %s: %v", s, err)
	}
	os.Stdout.WriteString("MEMLOCK CHECKED\n")
}
