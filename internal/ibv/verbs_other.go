//go:build !linux || (!cgo && !rpma_fake)

package ibv

import "unsafe"

// Same reports false.
func (c *Context) Same(*Context) bool { return false }

// PD is a protection domain; this build cannot allocate one.
type PD struct{}

// AllocPD returns ErrNotSupported in this build.
func (c *Context) AllocPD() (*PD, error) { return nil, ErrNotSupported }

// Context returns nil.
func (pd *PD) Context() *Context { return nil }

// Dealloc does nothing.
func (pd *PD) Dealloc() error { return nil }

// CompChannel is a completion channel; this build cannot create one.
type CompChannel struct{}

// CreateCompChannel returns ErrNotSupported in this build.
func (c *Context) CreateCompChannel() (*CompChannel, error) { return nil, ErrNotSupported }

// FD returns -1.
func (ch *CompChannel) FD() int { return -1 }

// GetCQEvent returns ErrNotSupported in this build.
func (ch *CompChannel) GetCQEvent(bool, int) (CQRef, error) { return CQRef{}, ErrNotSupported }

// GetCQEventRearm returns ErrNotSupported in this build.
func (ch *CompChannel) GetCQEventRearm() (CQRef, error) { return CQRef{}, ErrNotSupported }

// WaitCQEvent returns ErrNotSupported in this build.
func (ch *CompChannel) WaitCQEvent(int, int, bool, bool, int) (WaitReady, CQRef, bool, error) {
	return 0, CQRef{}, false, ErrNotSupported
}

// CQRef names a CQ; this build has none.
type CQRef struct{}

// Is reports false.
func (q *CQ) Is(CQRef) bool { return false }

// Destroy does nothing.
func (ch *CompChannel) Destroy() error { return nil }

// CQ is a completion queue; this build cannot create one.
type CQ struct{}

// CreateCQ returns ErrNotSupported in this build.
func (c *Context) CreateCQ(int, *CompChannel, int) (*CQ, error) { return nil, ErrNotSupported }

// Same reports false.
func (q *CQ) Same(*CQ) bool { return false }

// CQE returns 0.
func (q *CQ) CQE() int { return 0 }

// ReqNotify returns ErrNotSupported in this build.
func (q *CQ) ReqNotify(bool) error { return ErrNotSupported }

// Poll returns ErrNotSupported in this build.
func (q *CQ) Poll(*WCBuf, int, int) (int, error) { return 0, ErrNotSupported }

// ArmPoll returns ErrNotSupported in this build.
func (q *CQ) ArmPoll(*WCBuf, int, int) (int, error) { return 0, ErrNotSupported }

// AckEvents does nothing in this build.
func (q *CQ) AckEvents(int) {}

// ReapInto returns the zero Reap in this build.
func (q *CQ) ReapInto(*WCBuf, int, int) Reap { return Reap{} }

// NewWCBuf allocates n work completions (in Go memory: this build has no
// C code to poll into them).
func NewWCBuf(n int) (*WCBuf, error) {
	wcs := make([]WC, n)
	b := &WCBuf{wcs: wcs}
	if n > 0 {
		b.p = unsafe.Pointer(&wcs[0])
	}
	return b, nil
}

// Free drops the buffer.
func (b *WCBuf) Free() {
	if b != nil {
		b.p, b.wcs = nil, nil
	}
}

// Destroy does nothing.
func (q *CQ) Destroy() error { return nil }

// Poll sets every count to -1 in this build: it cannot poll.
func (s *Sweep) Poll(n int) {
	for i := range min(n, len(s.Got)) {
		s.Got[i] = -1
	}
}
