package tsc

// Read returns the CPU's time-stamp counter.
//
//go:noescape
func Read() uint64
