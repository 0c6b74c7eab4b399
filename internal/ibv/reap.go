package ibv

import "unsafe"

// Reap says where a post also polls its CQ, in the same crossing: up to
// room completions, into a WCBuf. The zero Reap polls nothing.
type Reap struct {
	cq, out uintptr
	room    int
}

// WCBuf is a buffer of work completions in C memory: C code polls into it
// (a post that reaps, CQ.Poll) with no Go pointer crossing, and Go code
// reads it through Slice.
type WCBuf struct {
	p   unsafe.Pointer
	wcs []WC
}

// Slice returns the buffer's completions (its whole length).
func (b *WCBuf) Slice() []WC { return b.wcs }

// addr returns the address of element i.
func (b *WCBuf) addr(i int) uintptr {
	return uintptr(b.p) + uintptr(i)*unsafe.Sizeof(WC{})
}
