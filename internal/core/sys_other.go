//go:build !linux

package core

import (
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
)

// Stubs of sys_linux.go: RDMA needs Linux, and internal/ibv refuses with
// ErrNotSupported before any of these could be reached.

// errNoData: librdmacm, whose short reads are ENODATA, is Linux-only.
const errNoData = syscall.EAGAIN

func nonblockDup(int) (int, error) { return -1, ibv.ErrNotSupported }

func mapPage() ([]byte, error) { return nil, ibv.ErrNotSupported }

func unmapPage([]byte) error { return nil }

func memlockLimit() (uint64, bool) { return 0, false }
