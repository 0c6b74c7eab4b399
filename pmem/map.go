//go:build linux

package pmem

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/cpuflush"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Map maps persistent memory at path for reading and writing.
//
// A Device DAX character device (/dev/daxX.Y) is mapped MAP_SHARED, whole
// when size is 0; a given size must be a multiple of the device's
// alignment (read from sysfs). A regular file is created if missing and
// grown to size if shorter (size 0: its current size, and a missing file
// is an error); it is mapped with
// MAP_SHARED_VALIDATE|MAP_SYNC when the file system supports it (FsDAX),
// else MAP_SHARED (Kind File, persisted with msync).
func Map(path string, size int64) (*Region, error) {
	if size < 0 {
		return nil, rpmaerr.Inval("pmem_map", "size %d must not be negative", size)
	}
	flag := os.O_RDWR
	if size > 0 {
		flag |= os.O_CREATE // size 0 maps what exists: never create an empty file
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, pathError("open", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	st, err := f.Stat()
	if err != nil {
		return nil, pathError("fstat", err)
	}
	if st.Mode()&os.ModeCharDevice != 0 {
		return mapDeviceDAX(f, path, size)
	}
	if !st.Mode().IsRegular() {
		return nil, rpmaerr.Inval("pmem_map", "%s is neither a regular file nor a Device DAX device", path)
	}
	if size == 0 {
		size = st.Size()
	}
	if size == 0 {
		return nil, rpmaerr.Inval("pmem_map", "%s is empty: give a size", path)
	}
	if st.Size() < size {
		if err := f.Truncate(size); err != nil {
			return nil, pathError("ftruncate", err)
		}
	}
	if int64(int(size)) != size {
		return nil, rpmaerr.Inval("pmem_map", "size %d too large", size)
	}
	prot := unix.PROT_READ | unix.PROT_WRITE
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), prot, unix.MAP_SHARED_VALIDATE|unix.MAP_SYNC)
	kind := FsDAX
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
		// Not a DAX file system (or a kernel without MAP_SYNC).
		b, err = unix.Mmap(int(f.Fd()), 0, int(size), prot, unix.MAP_SHARED)
		kind = File
	}
	if err != nil {
		return nil, mmapError("mmap", err)
	}
	if kind == FsDAX && !cpuflush.Supported() {
		unix.Munmap(b)
		return nil, rpmaerr.NoSupp("pmem_map", "%s is on a DAX file system but this build cannot flush CPU caches", path)
	}
	return &Region{b: b, m: b, kind: kind, path: path}, nil
}

func pathError(op string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if errno, ok := pe.Err.(unix.Errno); ok {
			return rpmaerr.New(op, rpma.CodeProvider, errno, "%s", pe.Path)
		}
	}
	return rpmaerr.New(op, rpma.CodeUnknown, 0, "%v", err)
}

// daxAttr reads a Device DAX attribute (size, align) from sysfs.
func daxAttr(f *os.File, name string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	p := fmt.Sprintf("/sys/dev/char/%d:%d/%s", unix.Major(st.Rdev), unix.Minor(st.Rdev), name)
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 0, 64)
}

func mapDeviceDAX(f *os.File, path string, size int64) (*Region, error) {
	if !cpuflush.Supported() {
		return nil, rpmaerr.NoSupp("pmem_map", "Device DAX needs a CPU cache flush, which this build lacks")
	}
	devSize, err := daxAttr(f, "size")
	if err != nil {
		return nil, rpmaerr.Inval("pmem_map", "%s is a character device but not Device DAX: %v", path, err)
	}
	align, err := daxAttr(f, "align")
	if err != nil || align <= 0 {
		align = 2 << 20 // kernels before 5.10 have no align attribute
	}
	if size == 0 {
		size = devSize
	}
	if size > devSize || size%align != 0 {
		return nil, rpmaerr.Inval("pmem_map", "size %d: %s holds %d bytes and needs a multiple of %d", size, path, devSize, align)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, mmapError("mmap", err)
	}
	return &Region{b: b, m: b, kind: DeviceDAX, path: path}, nil
}
