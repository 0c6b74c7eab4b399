//go:build unix

package pmem

import (
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// mmapAnon maps n bytes (whole pages) of zeroed anonymous memory, shared.
func mmapAnon(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANON)
	if err != nil {
		return nil, mmapError("mmap", err)
	}
	return b, nil
}

// msync writes b (page-aligned at its start) back to its file.
func msync(b []byte) error {
	if err := unix.Msync(b, unix.MS_SYNC); err != nil {
		return mmapError("msync", err)
	}
	return nil
}

// munmap unmaps a whole mapping.
func munmap(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return mmapError("munmap", err)
	}
	return nil
}

func mmapError(op string, err error) error {
	if errno, ok := err.(unix.Errno); ok {
		code := rpma.CodeProvider
		if errno == unix.ENOMEM {
			code = rpma.CodeNoMem
		}
		return rpmaerr.New(op, code, errno, "")
	}
	return rpmaerr.New(op, rpma.CodeUnknown, 0, "%v", err)
}
