// Package tsc reads a cycle counter for benchmarks that stamp every
// operation: on amd64 the CPU's time-stamp counter (RDTSC, a few ns even
// under TCG, where time.Now is a clock_gettime system call of about 1 µs on
// guests whose clock source is the HPET), elsewhere the monotonic clock in
// ns. A Clock converts counts to time by calibrating against the wall clock
// over the measured run.
package tsc
