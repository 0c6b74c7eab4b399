//go:build !unix

package pmem

import "github.com/gorpma/rpma/internal/rpmaerr"

// Memory for RDMA is mapped with mmap, which this system lacks; RDMA
// itself needs Linux.

func mmapAnon(int) ([]byte, error) {
	return nil, rpmaerr.NoSupp("pmem_alloc", "mapping memory for RDMA needs mmap (a Unix system)")
}

func msync([]byte) error { return nil }

func munmap([]byte) error { return nil }
