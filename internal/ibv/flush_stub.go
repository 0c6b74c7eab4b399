//go:build !rpma_native_flush || !linux || !cgo || rpma_fake

package ibv

import "syscall"

// HasFlush reports false: this build has no native flush.
func (q *QP) HasFlush() bool { return false }

// PostFlush returns EOPNOTSUPP: this build has no native flush.
func (q *QP) PostFlush(uint64, uint32, uint64, uint32, uint64, uint8, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostWriteFlush returns EOPNOTSUPP: this build has no native flush.
func (q *QP) PostWriteFlush(uint64, uint32, uint64, uint32, uint32, uint64, uint32,
	uint64, uint32, uint64, uint8, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}
