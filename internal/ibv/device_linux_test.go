//go:build linux && cgo && !rpma_fake

package ibv_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// kernelAtLeast reports whether release (uname -r) is at least major.minor.
func kernelAtLeast(t *testing.T, release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	require.GreaterOrEqual(t, len(parts), 2, "kernel release %q", release)
	maj, err := strconv.Atoi(parts[0])
	require.NoError(t, err)
	mnr, err := strconv.Atoi(leadingNumber(parts[1]))
	require.NoError(t, err)
	return maj > major || (maj == major && mnr >= minor)
}

func leadingNumber(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func TestIntegrationDevice(t *testing.T) {
	rdmatest.SkipIfNoRDMA(t)

	names, err := ibv.DeviceNames()
	require.NoError(t, err)
	require.Contains(t, names, "rxe0")

	ctx, err := ibv.OpenDevice("rxe0")
	require.NoError(t, err)
	defer ctx.Close()
	require.Equal(t, "rxe0", ctx.Name())

	attr, err := ctx.QueryDevice()
	require.NoError(t, err)
	t.Logf("rxe0: device_cap_flags_ex=%#x max_qp=%d max_cqe=%d max_qp_wr=%d max_sge=%d",
		attr.CapFlagsEx, attr.MaxQP, attr.MaxCQE, attr.MaxQPWR, attr.MaxSGE)
	require.Equal(t, "rxe0", attr.Name)
	require.Positive(t, attr.MaxQP)
	require.Positive(t, attr.MaxCQE)
	require.Positive(t, attr.MaxQPWR)
	require.Equal(t, 1, attr.PhysPortCnt)
	require.False(t, attr.ODP(), "rxe has no on-demand paging")

	// rxe gained native ATOMIC WRITE and FLUSH in Linux 6.2.
	native := kernelAtLeast(t, rdmatest.Kernel(), 6, 2)
	require.Equal(t, native, attr.NativeAtomicWrite(), "atomic write on %s", rdmatest.Kernel())
	require.Equal(t, native, attr.NativeFlush(), "flush on %s", rdmatest.Kernel())

	port, err := ctx.QueryPort(1)
	require.NoError(t, err)
	require.Equal(t, ibv.PortActive, port.State)
	require.Equal(t, 1024, port.ActiveMTU)

	require.NoError(t, ctx.Close())
	require.NoError(t, ctx.Close(), "second Close is a no-op")
}

func TestIntegrationOpenMissingDevice(t *testing.T) {
	rdmatest.SkipIfNoRDMA(t)
	_, err := ibv.OpenDevice("no-such-device")
	require.Error(t, err)
	require.Contains(t, err.Error(), "no-such-device")
}
