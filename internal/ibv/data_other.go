//go:build !linux || (!cgo && !rpma_fake)

package ibv

import (
	"syscall"
	"unsafe"
)

// IsIWARP reports false.
func (c *Context) IsIWARP() bool { return false }

// MR is a memory registration; this build cannot create one.
type MR struct {
	Addr   uint64
	Length uint64
	LKey   uint32
	RKey   uint32
}

// RegMR returns ErrNotSupported in this build.
func (pd *PD) RegMR(unsafe.Pointer, int, int) (*MR, error) { return nil, ErrNotSupported }

// Dereg does nothing.
func (m *MR) Dereg() error { return nil }

// AdviseMR returns ErrNotSupported in this build.
func (pd *PD) AdviseMR(int, uint32, uint64, uint32, uint32) error { return ErrNotSupported }

// QP is a queue pair; this build cannot create one.
type QP struct{}

// QP returns nil.
func (id *CMID) QP(bool) *QP { return nil }

// HasAtomicWrite reports false.
func (q *QP) HasAtomicWrite() bool { return false }

// ToError returns ErrNotSupported in this build.
func (q *QP) ToError() error { return ErrNotSupported }

// State returns ErrNotSupported in this build.
func (q *QP) State() (int, error) { return 0, ErrNotSupported }

// PostSend returns EOPNOTSUPP in this build.
func (q *QP) PostSend(uint64, SendOp, uint32, uint64, uint32, uint32, uint64, uint32, uint32, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostWriteRead returns EOPNOTSUPP in this build.
func (q *QP) PostWriteRead(uint64, uint32, uint64, uint32, uint32, uint64, uint32, uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int, int) {
	return syscall.EOPNOTSUPP, 0, 0
}

// PostInline8 returns EOPNOTSUPP in this build.
func (q *QP) PostInline8(uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostAtomicWrite returns EOPNOTSUPP in this build.
func (q *QP) PostAtomicWrite(uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostAtomic returns EOPNOTSUPP in this build.
func (q *QP) PostAtomic(uint64, SendOp, uint32, uint64, uint32, uint64, uint32, uint64, uint64, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostRecv returns EOPNOTSUPP in this build.
func (q *QP) PostRecv(uint64, uint64, uint32, uint32) syscall.Errno { return syscall.EOPNOTSUPP }

// SRQ is a shared receive queue; this build cannot create one.
type SRQ struct{}

// CreateSRQ returns ErrNotSupported in this build.
func (pd *PD) CreateSRQ(int) (*SRQ, int, error) { return nil, 0, ErrNotSupported }

// PostRecv returns EOPNOTSUPP in this build.
func (s *SRQ) PostRecv(uint64, uint64, uint32, uint32) syscall.Errno { return syscall.EOPNOTSUPP }

// Destroy does nothing.
func (s *SRQ) Destroy() error { return nil }

// Resize returns ErrNotSupported in this build.
func (q *CQ) Resize(int) error { return ErrNotSupported }

// MW is a memory window; this build cannot create one.
type MW struct{ RKey uint32 }

// AllocMW2 returns ErrNotSupported in this build.
func (pd *PD) AllocMW2() (*MW, error) { return nil, ErrNotSupported }

// Dealloc does nothing.
func (w *MW) Dealloc() error { return nil }

// PostBindMW returns EOPNOTSUPP in this build.
func (q *QP) PostBindMW(uint64, uint32, *MW, uint32, *MR, uint64, uint64, int, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostBatch returns EOPNOTSUPP in this build.
func (q *QP) PostBatch([]BatchWR, Reap) (syscall.Errno, int, int) {
	return syscall.EOPNOTSUPP, 0, 0
}
