//go:build !linux

package pmem

import "github.com/gorpma/rpma/internal/rpmaerr"

// Map is not supported on this system (it needs Linux's MAP_SYNC and
// Device DAX).
func Map(path string, size int64) (*Region, error) {
	return nil, rpmaerr.NoSupp("pmem_map", "persistent memory mapping needs Linux")
}
