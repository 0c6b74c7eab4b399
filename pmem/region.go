package pmem

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/gorpma/rpma/internal/cpuflush"
	"github.com/gorpma/rpma/internal/regmem"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Kind says what memory a Region maps, and so how it persists.
type Kind int

// Kinds of Region.
const (
	// Anonymous is DRAM from Alloc: nothing to persist.
	Anonymous Kind = iota
	// DeviceDAX is a Device DAX character device mapped MAP_SHARED:
	// persistent once written back from the CPU caches.
	DeviceDAX
	// FsDAX is a file on a DAX file system mapped with MAP_SYNC:
	// persistent once written back from the CPU caches.
	FsDAX
	// File is a file mapped MAP_SHARED without MAP_SYNC (the file system
	// is not DAX, or the kernel refused MAP_SYNC): persistent after msync.
	File
)

// String names the kind in words ("Device DAX", "file (msync)"), for
// logs and messages; an unknown value is "Kind(n)".
func (k Kind) String() string {
	switch k {
	case Anonymous:
		return "anonymous memory (DRAM)"
	case DeviceDAX:
		return "Device DAX"
	case FsDAX:
		return "FsDAX file (MAP_SYNC)"
	case File:
		return "file (msync)"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// IsPMem reports whether stores reach persistence by a CPU cache flush
// (Device DAX, or FsDAX with MAP_SYNC): libpmem's pmem_is_pmem.
func (k Kind) IsPMem() bool { return k == DeviceDAX || k == FsDAX }

// Region is a mapping from Alloc or Map.
type Region struct {
	mu   sync.RWMutex
	b    []byte // what the caller sees
	m    []byte // the whole mapping (whole pages), for munmap
	kind Kind
	path string
}

// Alloc maps size bytes (rounded up to whole pages) of anonymous memory,
// zeroed and page-aligned. It is MAP_SHARED, as librpma's own buffers, so
// that a fork does not leave the parent's registered pages copy-on-write.
func Alloc(size int) (*Region, error) {
	if size <= 0 {
		return nil, rpmaerr.Inval("pmem_alloc", "size %d must be positive", size)
	}
	page := os.Getpagesize()
	n := (size + page - 1) / page * page
	b, err := mmapAnon(n)
	if err != nil {
		return nil, err
	}
	return &Region{b: b[:size:size], m: b, kind: Anonymous}, nil
}

// Bytes is the mapped memory, nil for a nil or closed Region. It is valid
// until Close.
func (r *Region) Bytes() []byte {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.b
}

// Len is the mapping's length in bytes (0 after Close).
func (r *Region) Len() int { return len(r.Bytes()) }

// Kind says what the Region maps (the zero Kind for a nil Region).
func (r *Region) Kind() Kind {
	if r == nil {
		return 0
	}
	return r.kind
}

// Path is the mapped device or file ("" for Alloc and for a nil Region).
func (r *Region) Path() string {
	if r == nil {
		return ""
	}
	return r.path
}

// Persist makes bytes [off, off+n) of the Region durable with the
// primitive its Kind needs: cache write-back and fence (DeviceDAX, FsDAX),
// msync (File), nothing (Anonymous).
func (r *Region) Persist(off, n int) error {
	if r == nil {
		return rpmaerr.Inval("pmem_persist", "region is nil")
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.b == nil {
		return rpmaerr.Inval("pmem_persist", "region is closed")
	}
	if off < 0 || n < 0 || off > len(r.b)-n {
		return rpmaerr.Inval("pmem_persist", "range [%d, %d+%d) outside the region of %d bytes", off, off, n, len(r.b))
	}
	switch r.kind {
	case DeviceDAX, FsDAX:
		cpuflush.Flush(r.b[off : off+n])
	case File:
		page := os.Getpagesize()
		start := off / page * page
		end := off + n
		if err := msync(r.b[start:end]); err != nil {
			return err
		}
	}
	return nil
}

// Close unmaps the Region. It is idempotent and nil-safe.
//
// It refuses while memory of the Region is registered with an RDMA device
// (mr.Reg): the device could still read or write it, and unmapped memory
// may be mapped again for something else. The error then matches
// syscall.EBUSY and [rpma.ErrInvalidArgument] and says how many
// registrations are left; the Region stays mapped and usable. Deregister
// them (mr.Local.Dereg) and call Close again.
func (r *Region) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b == nil {
		return nil
	}
	if n := regmem.Overlapping(r.m); n > 0 {
		return rpmaerr.New("pmem_close", rpma.CodeInval, syscall.EBUSY,
			"%d memory region(s) still registered in it: deregister them (mr.Local.Dereg) first", n)
	}
	m := r.m
	r.b, r.m = nil, nil
	return munmap(m)
}
