//go:build !linux

package pmem

import "github.com/gorpma/rpma/rpma"

// Map is not supported on this system (it needs Linux's MAP_SYNC and
// Device DAX).
func Map(path string, size int64) (*Region, error) {
	return nil, rpma.NoSupp("pmem_map", "persistent memory mapping needs Linux")
}
