// Package pmem provides the memory that RDMA reads and writes: never Go
// heap memory (the device touches it behind the Go runtime's back), but
// page-aligned mappings the caller owns until Close.
//
//   - Alloc maps anonymous memory (DRAM).
//   - Map maps persistent memory: a Device DAX character device
//     (/dev/daxX.Y; size and alignment from sysfs), or a file, with
//     MAP_SHARED_VALIDATE|MAP_SYNC where the file system is DAX (FsDAX)
//     and a plain shared mapping where it is not.
//
// Each Region says what it got (Kind) and persists with the matching
// primitive: CPU cache write-back and a fence for Device DAX and MAP_SYNC
// mappings (data is durable once it leaves the CPU caches), msync for a
// plain file mapping, nothing for DRAM.
//
// A Region is safe for concurrent use: Persist and Bytes may be called from
// several goroutines; Close must not race with them.
package pmem
