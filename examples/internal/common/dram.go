// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"errors"
	"fmt"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
)

// RegDRAM is what librpma's examples do for each of their DRAM buffers:
// n zeroed, page-aligned bytes (malloc_aligned) registered with p for
// usage (rpma_mr_reg). The region's Bytes are the buffer; close
// deregisters it and frees the memory.
func RegDRAM(p *peer.Peer, n int, usage mr.Usage) (m *mr.Local, close func() error, err error) {
	mem, err := pmem.Alloc(n)
	if err != nil {
		return nil, nil, fmt.Errorf("pmem.Alloc: %w", err)
	}
	if m, err = mr.Reg(p, mem.Bytes()[:n], usage); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("mr.Reg: %w", err), mem.Close())
	}
	return m, closeAll(closer{"mr.Local.Dereg", m.Dereg}, closer{"pmem.Region.Close", mem.Close}), nil
}
