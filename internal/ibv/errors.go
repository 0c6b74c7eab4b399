package ibv

import (
	"errors"
	"os"
	"syscall"
)

// ErrNotSupported is returned by every call of a build without cgo or on
// a system other than Linux.
var ErrNotSupported = errors.New("ibv: RDMA is not supported by this build (needs linux and cgo with libibverbs and librdmacm)")

// callError wraps errno as the failure of the C function call. A zero
// errno (some verbs fail without setting it) becomes EIO.
func callError(call string, errno syscall.Errno) error {
	if errno == 0 {
		errno = syscall.EIO
	}
	return os.NewSyscallError(call, errno)
}
