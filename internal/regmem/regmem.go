// Package regmem records which memory is registered with an RDMA device,
// so that the owner of a mapping can refuse to unmap memory a device may
// still read or write: pmem.Region.Close asks it before munmap, and
// internal/core tells it about every registration and deregistration.
// It is pure Go (no cgo), so pmem stays free of the RDMA layers.
//
// The record also keeps every registered region and its memory reachable
// until it is deregistered: the device goes on using the memory after
// registration returns, so neither may be collected meanwhile, even when
// the caller drops its last reference without deregistering.
package regmem

import (
	"sync"
	"unsafe"
)

var regs = struct {
	sync.Mutex
	m map[any][]byte
}{m: map[any][]byte{}}

// Add records b as registered under key (the registration object) until
// Remove(key).
func Add(key any, b []byte) {
	regs.Lock()
	regs.m[key] = b
	regs.Unlock()
}

// Remove forgets the registration under key; it is a no-op for a key not
// recorded.
func Remove(key any) {
	regs.Lock()
	delete(regs.m, key)
	regs.Unlock()
}

// Overlapping returns how many recorded registrations share at least one
// byte with b.
func Overlapping(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	lo, hi := span(b)
	regs.Lock()
	defer regs.Unlock()
	n := 0
	for _, r := range regs.m {
		if len(r) == 0 {
			continue
		}
		if rlo, rhi := span(r); rlo < hi && lo < rhi {
			n++
		}
	}
	return n
}

// span is b's address range [lo, hi).
func span(b []byte) (lo, hi uintptr) {
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return lo, lo + uintptr(len(b))
}

// Each calls f for every recorded registration (under the record's lock:
// f must not call Add or Remove).
func Each(f func(key any, b []byte)) {
	regs.Lock()
	defer regs.Unlock()
	for k, b := range regs.m {
		f(k, b)
	}
}
