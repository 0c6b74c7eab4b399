package ibv

import (
	"errors"
	"os"
	"syscall"
)

// ErrNotSupported is returned by every call of a build without cgo or on
// a system other than Linux.
var ErrNotSupported = errors.New("ibv: RDMA is not supported by this build (needs linux and cgo with libibverbs and librdmacm)")

// The "nothing yet" of the non-blocking reads, prebuilt: waits meet them
// at every try, and must not allocate for it.
var (
	errCQEventAgain    = &os.SyscallError{Syscall: "ibv_get_cq_event", Err: syscall.EAGAIN}
	errCMEventAgain    = &os.SyscallError{Syscall: "rdma_get_cm_event", Err: syscall.EAGAIN}
	errAsyncEventAgain = &os.SyscallError{Syscall: "ibv_get_async_event", Err: syscall.EAGAIN}
)

// callError wraps errno as the failure of the C function call. A zero
// errno (some verbs fail without setting it) becomes EIO.
func callError(call string, errno syscall.Errno) error {
	if errno == 0 {
		errno = syscall.EIO
	}
	return os.NewSyscallError(call, errno)
}

// AddrInfoError is a failure of rdma_getaddrinfo that getaddrinfo reports
// by an EAI_* code rather than an errno (for example an unknown host).
type AddrInfoError struct {
	Code int    // the EAI_* code
	Msg  string // gai_strerror(Code)
}

func (e *AddrInfoError) Error() string { return "rdma_getaddrinfo: " + e.Msg }
