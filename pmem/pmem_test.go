package pmem_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/regmem"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

func TestAlloc(t *testing.T) {
	r, err := pmem.Alloc(10000)
	require.NoError(t, err)
	b := r.Bytes()
	require.Len(t, b, 10000)
	require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%uintptr(os.Getpagesize()), "page-aligned")
	require.Equal(t, pmem.Anonymous, r.Kind())
	require.False(t, r.Kind().IsPMem())
	for i := range b {
		require.Zero(t, b[i])
	}
	b[9999] = 7
	require.NoError(t, r.Persist(0, 10000))
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")
	require.Zero(t, r.Len())
	require.ErrorIs(t, r.Persist(0, 1), rpma.ErrInvalidArgument, "persist after close")
	var nilRegion *pmem.Region
	require.NoError(t, nilRegion.Close(), "Close is nil-safe")
}

func TestAllocInvalid(t *testing.T) {
	for _, n := range []int{0, -1} {
		_, err := pmem.Alloc(n)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	}
}

func TestPersistBounds(t *testing.T) {
	r, err := pmem.Alloc(4096)
	require.NoError(t, err)
	defer r.Close()
	for _, c := range [][2]int{{-1, 1}, {0, 4097}, {4096, 1}, {1, -1}, {4000, 100}} {
		require.ErrorIs(t, r.Persist(c[0], c[1]), rpma.ErrInvalidArgument, "%v", c)
	}
	require.NoError(t, r.Persist(4096, 0))
}

// TestMapPlainFile: on a file system without DAX the mapping is a plain
// shared one, persisted with msync, and what is written reaches the file.
func TestMapPlainFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pool")
	r, err := pmem.Map(path, 8192)
	require.NoError(t, err)
	if r.Kind() == pmem.FsDAX {
		t.Skip("the temp dir is on a DAX file system")
	}
	require.Equal(t, pmem.File, r.Kind())
	require.False(t, r.Kind().IsPMem())
	require.Equal(t, path, r.Path())
	copy(r.Bytes()[5000:], "persisted")
	require.NoError(t, r.Persist(5000, 9))
	require.NoError(t, r.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, b, 8192)
	require.Equal(t, "persisted", string(b[5000:5009]))

	// Size 0 maps the existing file whole; a larger size grows it.
	r, err = pmem.Map(path, 0)
	require.NoError(t, err)
	require.Equal(t, 8192, r.Len())
	require.Equal(t, "persisted", string(r.Bytes()[5000:5009]))
	require.NoError(t, r.Close())
	r, err = pmem.Map(path, 16384)
	require.NoError(t, err)
	require.Equal(t, 16384, r.Len())
	require.NoError(t, r.Close())
}

func TestMapInvalid(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err := pmem.Map(empty, 0)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "an empty file needs a size")
	_, err = pmem.Map("/dev/null", 0)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "a character device that is not Device DAX")
	_, err = pmem.Map(t.TempDir(), 0)
	require.ErrorIs(t, err, rpma.ErrProvider, "a directory cannot be opened read-write")
	_, err = pmem.Map("/nonexistent-dir/x", 4096)
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

func TestMapMissingFileSizeZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing")
	_, err := pmem.Map(path, 0)
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	_, err = os.Stat(path)
	require.True(t, os.IsNotExist(err), "size 0 must not create the file")
}

// TestCloseRefusesRegistered: a Region does not unmap memory that is
// registered with a device (internal/regmem records what mr.Reg
// registered); the VM tier does the same with a real registration
// (mr TestIntegrationReg).
func TestCloseRefusesRegistered(t *testing.T) {
	r, err := pmem.Alloc(3 * 4096)
	require.NoError(t, err)
	key := new(int)
	regmem.Add(key, r.Bytes()[4096:4100])
	err = r.Close()
	require.ErrorIs(t, err, syscall.EBUSY)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "1 memory region(s) still registered")
	require.Len(t, r.Bytes(), 3*4096, "still mapped")
	r.Bytes()[4096] = 1 // and usable
	regmem.Remove(key)
	require.NoError(t, r.Close())
	require.Nil(t, r.Bytes())

	// Registered memory elsewhere does not stop it.
	other := make([]byte, 64)
	regmem.Add(key, other)
	defer regmem.Remove(key)
	r, err = pmem.Alloc(4096)
	require.NoError(t, err)
	require.NoError(t, r.Close())
}
