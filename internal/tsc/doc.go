// Package tsc reads a cycle counter, cheaply enough to read on every
// operation. It is on the data path: internal/core reads it after each
// post and empty poll to time the busy poller's yield (yield.go). The
// benchmarks use it too, to stamp every operation. On amd64 it is the
// CPU's time-stamp counter (RDTSC, a few ns even under TCG, where
// time.Now is a clock_gettime system call of about 1 µs on guests whose
// clock source is the HPET), elsewhere the monotonic clock in ns. A Clock
// converts counts to time by calibrating against the wall clock over the
// measured run (benchmarks only).
package tsc
