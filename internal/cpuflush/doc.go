// Package cpuflush writes CPU cache lines back to memory and fences: the
// persist primitive for memory mapped with MAP_SYNC or from Device DAX,
// where data is durable once it leaves the CPU caches. On amd64 it uses
// CLWB where the CPU has it, else CLFLUSHOPT, else CLFLUSH, then SFENCE,
// all in one cgo crossing per range.
package cpuflush
