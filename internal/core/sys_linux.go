//go:build linux

package core

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/internal/ibv"
)

// The system calls core makes itself, outside the cgo layer, that other
// systems lack (sys_other.go has their stubs: there, nothing reaches them,
// since internal/ibv returns ErrNotSupported first).

// errNoData is how librdmacm reports a short read of an event channel.
const errNoData = syscall.ENODATA

// nonblockDup sets fd non-blocking (which a dup shares: O_NONBLOCK belongs
// to the open file description) and returns a close-on-exec dup of it.
func nonblockDup(fd int) (int, error) {
	if err := orInjected(ibv.GoSiteFcntlNonblockDup, func() error { return unix.SetNonblock(fd, true) }); err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	nfd, err := -1, injected(ibv.GoSiteFcntlDupfd)
	if err == nil {
		nfd, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	}
	if err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	return nfd, nil
}

// mapPage maps one page of anonymous memory, shared (so that it survives a
// fork, as librpma's buffers do).
func mapPage() ([]byte, error) {
	if err := injected(ibv.GoSiteMmap); err != nil {
		return nil, err
	}
	return unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANON)
}

// injected is the failure the fault-injection build (tag rpma_inject) has
// armed at the Go-side site, nil when none; in a normal build it is nil,
// and the compiler drops the check.
func injected(site int) error {
	if e := ibv.InjectGo(site); e != 0 {
		return e
	}
	return nil
}

// orInjected is call, unless a failure is armed at site.
func orInjected(site int, call func() error) error {
	if err := injected(site); err != nil {
		return err
	}
	return call()
}

// unmapPage unmaps what mapPage mapped.
func unmapPage(b []byte) error { return unix.Munmap(b) }

// memlockLimit returns the soft RLIMIT_MEMLOCK when it limits what this
// process may pin: false when it is unlimited, cannot be read, or the
// process has CAP_IPC_LOCK (then the kernel ignores it).
func memlockLimit() (uint64, bool) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r); err != nil || r.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err == nil && data[0].Effective&(1<<unix.CAP_IPC_LOCK) != 0 {
		return 0, false
	}
	return r.Cur, true
}
