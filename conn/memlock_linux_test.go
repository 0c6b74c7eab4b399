//go:build linux && cgo

package conn_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationConnMemlock: what a connection pins beyond the user's
// regions (a page for its emulated flush's buffer, a registration per
// narrow grant)
// counts against RLIMIT_MEMLOCK, and at the limit both fail with an error
// that names it, as mr.Reg's does. The VM runs tests as root, so the
// test runs itself again with CAP_IPC_LOCK dropped (setpriv) and a 1 MiB
// limit, as a non-root user would have (mr's TestIntegrationRegMemlock
// does the same for mr.Reg).
func TestIntegrationConnMemlock(t *testing.T) {
	rdmatest.RunWithoutIPCLock(t, "TestHelperConnMemlock", "CONN MEMLOCK CHECKED")
}

// pinnedBytes is what the process has pinned (VmPin of /proc/self/status,
// the count the kernel checks against RLIMIT_MEMLOCK).
func pinnedBytes(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmPin:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			require.NoError(t, err, sc.Text())
			return kb << 10
		}
	}
	t.Fatal("no VmPin in /proc/self/status")
	return 0
}

// TestHelperConnMemlock is the child of TestIntegrationConnMemlock.
func TestHelperConnMemlock(t *testing.T) {
	if !rdmatest.WithoutIPCLock() {
		t.Log("the child of TestIntegrationConnMemlock")
		return
	}
	const limit = 1 << 20
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: limit, Max: limit}))
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	_, server := pairCfg(t, p, e, ip, nil, nil, nil)
	base, _ := region(t, p, 64<<10, mr.UsageGranted|mr.UsageWriteDst)
	ctx := testCtx(t)

	// Pin up to the limit exactly: one more page fails.
	rest := limit - pinnedBytes(t)
	t.Logf("pinned before the filler: %d bytes", limit-rest)
	require.Positive(t, rest)
	filling, err := pmem.Alloc(rest)
	require.NoError(t, err)
	defer filling.Close()
	filler, err := mr.Reg(p, filling.Bytes(), mr.UsageWriteDst)
	require.NoError(t, err, "up to the limit")

	names := func(err error, what string) {
		t.Helper()
		t.Logf("at the limit: %v", err)
		require.ErrorIs(t, err, rpma.ErrProvider)
		require.ErrorIs(t, err, syscall.ENOMEM)
		for _, s := range []string{what, "RLIMIT_MEMLOCK", strconv.Itoa(limit), "CAP_IPC_LOCK"} {
			require.Contains(t, err.Error(), s)
		}
	}
	g, err := server.Grant(ctx, base, 0, 4096, mr.UsageWriteDst)
	require.Nil(t, g)
	names(err, "granted range")
	// Only the emulated flush has a buffer to pin (native flush, the
	// Debian 13 tier, has none, and connects at the limit).
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	if server.NativeFlush() {
		require.NoError(t, err, "a native flush pins nothing of its own")
		require.NoError(t, req.Close())
	} else {
		names(err, "flush buffer")
	}

	// The limit was the cause: with the filler gone both work.
	require.NoError(t, filler.Dereg())
	g, err = server.Grant(ctx, base, 0, 4096, mr.UsageWriteDst)
	require.NoError(t, err)
	require.NoError(t, g.Revoke())
	req, err = conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	require.NoError(t, req.Close())
	os.Stdout.WriteString("CONN MEMLOCK CHECKED\n")
}
