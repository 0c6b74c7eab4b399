//go:build linux

package pmem_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationMapNVDIMM maps the VM's emulated NVDIMM: Device DAX whole
// and in part, or a file on the FsDAX mount with MAP_SYNC.
func TestIntegrationMapNVDIMM(t *testing.T) {
	path, mode := rdmatest.PMem(t)
	switch mode {
	case "devdax":
		b, err := os.ReadFile("/sys/bus/dax/devices/" + filepath.Base(path) + "/size")
		require.NoError(t, err)
		size, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)

		r, err := pmem.Map(path, 0)
		require.NoError(t, err)
		require.Equal(t, pmem.DeviceDAX, r.Kind())
		require.True(t, r.Kind().IsPMem())
		require.Equal(t, size, r.Len(), "size 0 maps the whole device")
		copy(r.Bytes()[4096:], "durable")
		require.NoError(t, r.Persist(4096, 7))
		require.NoError(t, r.Close())

		r, err = pmem.Map(path, 2<<20)
		require.NoError(t, err)
		require.Equal(t, "durable", string(r.Bytes()[4096:4103]), "the device kept what was written")
		require.NoError(t, r.Close())

		_, err = pmem.Map(path, 4096)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "a size that is not a multiple of the alignment")
		_, err = pmem.Map(path, int64(size)+2<<20)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, "larger than the device")
	case "fsdax":
		r, err := pmem.Map(filepath.Join(path, "pool"), 4<<20)
		require.NoError(t, err)
		defer r.Close()
		require.Equal(t, pmem.FsDAX, r.Kind(), "MAP_SYNC on a DAX file system")
		copy(r.Bytes(), "durable")
		require.NoError(t, r.Persist(0, 7))
	default:
		t.Fatalf("unknown pmem mode %q", mode)
	}
}
