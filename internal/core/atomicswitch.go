package core

import "sync/atomic"

// emulateAtomicWrite makes peers created while it is set use the emulated
// atomic write (an inline, fenced 8-byte RDMA write) even where the device
// has the native one. Benchmarks set it to compare with C librpma 1.2.0,
// whose atomic write is always emulated; nothing else does.
var emulateAtomicWrite atomic.Bool

// EmulateAtomicWriteForBenchmarks makes peers created from now on emulate
// the atomic write (on) or use the native one where the device has it
// (off, the default). It decides which data path every AtomicWrite of
// those peers takes (read once, by NewPeer); only benchmarks call it. It
// returns the previous setting.
func EmulateAtomicWriteForBenchmarks(on bool) (was bool) {
	return emulateAtomicWrite.Swap(on)
}
