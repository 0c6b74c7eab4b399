//go:build amd64 && cgo

package cpuflush

/*
#include <stdint.h>
#include <cpuid.h>

// 0: clflush, 1: clflushopt, 2: clwb
static int rpma_flush_kind(void) {
	unsigned int a, b, c, d;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		if (b & (1u << 24)) return 2;
		if (b & (1u << 23)) return 1;
	}
	return 0;
}

static void rpma_flush_range(uintptr_t addr, uintptr_t len, int kind) {
	uintptr_t p = addr & ~(uintptr_t)63;
	uintptr_t end = addr + len;
	for (; p < end; p += 64) {
		switch (kind) {
		case 2: __asm__ volatile("clwb %0" : "+m"(*(volatile char *)p)); break;
		case 1: __asm__ volatile("clflushopt %0" : "+m"(*(volatile char *)p)); break;
		default: __asm__ volatile("clflush %0" : "+m"(*(volatile char *)p)); break;
		}
	}
	__asm__ volatile("sfence" ::: "memory");
}
*/
import "C"

import "unsafe"

var kind = C.rpma_flush_kind()

// Supported reports whether this build can flush CPU caches.
func Supported() bool { return true }

// Instruction names the cache-line write-back instruction in use.
func Instruction() string {
	switch kind {
	case 2:
		return "clwb"
	case 1:
		return "clflushopt"
	}
	return "clflush"
}

// Flush writes back the cache lines of b and fences.
func Flush(b []byte) {
	if len(b) == 0 {
		return
	}
	C.rpma_flush_range(C.uintptr_t(uintptr(unsafe.Pointer(&b[0]))), C.uintptr_t(len(b)), kind)
	observed(b)
}
