// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-map_file_with_signature_check.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"bytes"
	"fmt"
)

// The PMem signature convention of librpma's examples
// (examples/common/common-conn.h, common-map_file_with_signature_check.c):
// a mapped PMem file holds, at the beginning of the used part (Offset), the
// signature "RPMA_EXAMPLE_SIG" with its NUL, and the user data right after
// it. Until the signature is there the contents are treated as garbage and
// initialised.
const (
	// SignatureStr mirrors SIGNATURE_STR.
	SignatureStr = "RPMA_EXAMPLE_SIG"
	// SignatureLen mirrors SIGNATURE_LEN (strlen(SIGNATURE_STR) + 1): the
	// signature is stored and compared with its terminating NUL, 17 bytes.
	SignatureLen = len(SignatureStr) + 1
)

// PersistFunc makes mem[off:off+n] persistent, like pmem_persist() or the
// library's pmem.Region.Persist. A nil PersistFunc means nothing needs
// persisting (DRAM).
type PersistFunc func(off, n int) error

// InitFunc mirrors common_init_func_t: it initialises the user data of a
// fresh mapping and returns how many bytes from the start of data it wrote
// (to be persisted). InitHello is the one the C clients use; the servers
// pass none.
type InitFunc func(data []byte) (int, error)

// SignatureCheck holds the arguments of
// common_pmem_map_file_with_signature_check(path, size, mem, init_pmem),
// applied to an already mapped buffer by Apply.
type SignatureCheck struct {
	// Offset is mem->offset: where the used part of the mapping starts (the
	// clients' <pmem-offset>; always 0 on the servers).
	Offset int
	// Size is the user data size the caller needs after the signature
	// (HELLO_STR_SIZE on the servers, HELLO_T_SIZE on the clients). It must
	// be positive, as in C.
	Size int
	// Init initialises the user data of an unsigned mapping. Nil means:
	// write a single NUL (an empty string) and persist that byte.
	Init InitFunc
	// Persist persists a range of the mapping; nil means no-op.
	Persist PersistFunc
	// CInitQuirk reproduces a bug of the C function: it initialises the
	// user data at 2*Offset+SignatureLen (mem->mr_ptr + mem->offset +
	// mem->data_offset, where data_offset already includes offset) and
	// hands Init Size+Offset bytes (here clipped to the end of the mapping,
	// which C does not check), while the signature goes to Offset and
	// everyone (the C example itself, its peer) later uses the data at
	// Offset+SignatureLen. With Offset 0 both placements are the same.
	// Leave it false: the signature and the returned data offset, which is
	// all any other program sees, are the same either way, and a file
	// initialised without the quirk reads back correctly in C. Set it only
	// to reproduce the C bytes of a freshly initialised file exactly.
	CInitQuirk bool
}

// SignatureResult is what Apply reports.
type SignatureResult struct {
	// DataOffset is mem->data_offset: Offset + SignatureLen, the offset of
	// the user data in the mapping (and so in the memory region registered
	// over the whole mapping). The servers send it as
	// common_data.data_offset; the clients find their hello_t there.
	DataOffset int
	// Initialized reports that the signature was missing, so the data was
	// initialised and the signature written.
	Initialized bool
}

// HasSignature reports whether mem holds the signature at off: the
// SignatureLen bytes there equal SignatureStr plus NUL (the C strncmp with
// n = SIGNATURE_LEN is exactly this comparison).
func HasSignature(mem []byte, off int) bool {
	if off < 0 || off > len(mem)-SignatureLen {
		return false
	}
	return bytes.Equal(mem[off:off+SignatureLen], signatureBytes)
}

var signatureBytes = append([]byte(SignatureStr), 0)

// Apply runs the signature check on a mapping mem (all of the mapped file,
// as the C code registers all of it):
//
//  1. Offset >= 0 and Size > 0, and len(mem) >= Offset + SignatureLen +
//     Size ("%s has too small size (%zu < %zu)" in C), else an error and
//     nothing is written.
//  2. If HasSignature(mem, Offset) nothing is written or persisted.
//  3. Otherwise, in this order:
//     a. the data is initialised at DataOffset (see CInitQuirk): Init(data)
//     with data = mem[DataOffset : DataOffset+Size], then the n bytes it
//     reports are persisted; or, without Init, mem[DataOffset] = 0 and that
//     1 byte is persisted;
//     b. SignatureStr plus NUL is copied to mem[Offset:] and those
//     SignatureLen bytes are persisted.
//
// Writing the signature last, after the data is persistent, is what makes a
// crash in between harmless: the next run initialises again.
func (c SignatureCheck) Apply(mem []byte) (SignatureResult, error) {
	if c.Offset < 0 || c.Size <= 0 {
		return SignatureResult{}, fmt.Errorf("signature check: offset %d, size %d: %w", c.Offset, c.Size, ErrInvalid)
	}
	if c.Offset > len(mem) || c.Size > len(mem) || len(mem)-c.Offset-c.Size < SignatureLen {
		return SignatureResult{}, fmt.Errorf("mapping has too small size (%d < %d + %d + %d): %w",
			len(mem), c.Offset, SignatureLen, c.Size, ErrShortBuffer)
	}
	res := SignatureResult{DataOffset: c.Offset + SignatureLen}
	if HasSignature(mem, c.Offset) {
		return res, nil
	}

	initOff, initLen := res.DataOffset, c.Size
	if c.CInitQuirk {
		// C hands init_pmem size + offset bytes from there without
		// checking them against the mapping; clip to its end.
		initOff, initLen = c.Offset+res.DataOffset, min(c.Size+c.Offset, len(mem)-c.Offset-res.DataOffset)
		if initLen <= 0 {
			return SignatureResult{}, fmt.Errorf("signature check (C quirk): initial data at %d beyond the mapping (%d): %w",
				initOff, len(mem), ErrShortBuffer)
		}
	}
	data := mem[initOff : initOff+initLen : initOff+initLen]
	n := 1
	if c.Init != nil {
		var err error
		if n, err = c.Init(data); err != nil {
			return SignatureResult{}, fmt.Errorf("initialization of PMem failed: %w", err)
		}
		if n < 0 || n > len(data) {
			return SignatureResult{}, fmt.Errorf("initialization of PMem failed: %d bytes to persist out of %d: %w", n, len(data), ErrInvalid)
		}
	} else {
		data[0] = 0
	}
	if err := c.persist(initOff, n); err != nil {
		return SignatureResult{}, err
	}
	copy(mem[c.Offset:], signatureBytes)
	if err := c.persist(c.Offset, SignatureLen); err != nil {
		return SignatureResult{}, err
	}
	res.Initialized = true
	return res, nil
}

func (c SignatureCheck) persist(off, n int) error {
	if c.Persist == nil {
		return nil
	}
	if err := c.Persist(off, n); err != nil {
		return fmt.Errorf("persist %d bytes at %d: %w", n, off, err)
	}
	return nil
}
