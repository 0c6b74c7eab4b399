// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"fmt"
	"os"

	"github.com/gorpma/rpma/pmem"
)

// Mem mirrors struct common_mem of librpma's examples: the memory of the
// examples that take an optional <pmem-path> (03, 04, 05, 09, 09scch),
// PMem with the signature convention or DRAM.
type Mem struct {
	// Region is the mapping of <pmem-path>, or the DRAM allocation.
	Region *pmem.Region
	// Buf is the memory to register (mr_ptr, mr_size): all of the mapping,
	// so that remote offsets are file offsets, or the requested size of
	// DRAM.
	Buf []byte
	// DataOffset is where the user data starts in Buf (data_offset): right
	// after the signature in PMem, 0 in DRAM.
	DataOffset int
	// Data is the user data, Buf[DataOffset:DataOffset+Size].
	Data []byte
	// IsPMem says that <pmem-path> was mapped (is_pmem).
	IsPMem bool
}

// OpenMem gets an example's memory as librpma's examples do. With a path it
// maps the path (MapPMem) and applies check to all of the mapping (check's
// Persist is the mapping's; see SignatureCheck.Apply):
// common_pmem_map_file_with_signature_check. Without one (path "") it says
// so on stderr (NoPMemMsg) and allocates check.Size zeroed bytes of DRAM,
// which check.Init, if any, initialises: the clients' write_hello_str.
// Close releases the memory.
func OpenMem(path string, check SignatureCheck) (*Mem, error) {
	if path == "" {
		fmt.Fprint(stderr, NoPMemMsg)
		r, err := pmem.Alloc(check.Size)
		if err != nil {
			return nil, fmt.Errorf("pmem.Alloc: %w", err)
		}
		m := &Mem{Region: r, Buf: r.Bytes()[:check.Size]}
		m.Data = m.Buf
		if check.Init != nil {
			if _, err := check.Init(m.Data); err != nil {
				r.Close()
				return nil, err
			}
		}
		return m, nil
	}
	r, err := MapPMem(path)
	if err != nil {
		return nil, err
	}
	check.Persist = r.Persist
	sig, err := check.Apply(r.Bytes())
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &Mem{Region: r, Buf: r.Bytes(), DataOffset: sig.DataOffset, IsPMem: true}
	m.Data = m.Buf[m.DataOffset : m.DataOffset+check.Size]
	return m, nil
}

// Persist makes Buf[off:off+n] persistent (nothing to do in DRAM).
func (m *Mem) Persist(off, n int) error {
	if err := m.Region.Persist(off, n); err != nil {
		return fmt.Errorf("pmem.Region.Persist: %w", err)
	}
	return nil
}

// Close releases the memory; it must not be registered any more.
func (m *Mem) Close() error { return m.Region.Close() }

// MapPMem maps path, a Device DAX or an existing file, as librpma's
// examples do with pmem_map_file (all of it, never creating a file), and
// says on stderr what kind of mapping it got.
func MapPMem(path string) (*pmem.Region, error) {
	// as pmem_map_file without PMEM_FILE_CREATE: the file must exist
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("pmem_map_file() for %s failed: %w", path, err)
	}
	r, err := pmem.Map(path, 0)
	if err != nil {
		return nil, fmt.Errorf("pmem.Map: %w", err)
	}
	switch r.Kind() {
	case pmem.DeviceDAX:
		fmt.Fprintf(stderr, "Using Device DAX %s (%d bytes)\n", path, r.Len())
	case pmem.FsDAX:
		fmt.Fprintf(stderr, "Using FsDAX %s (MAP_SYNC, %d bytes)\n", path, r.Len())
	default:
		fmt.Fprintf(stderr, "Using a file mapping (msync) %s (%d bytes): not persistent memory\n", path, r.Len())
	}
	return r, nil
}
