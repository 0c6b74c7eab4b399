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

	"github.com/gorpma/rpma/mr"
)

// AdviseFsDAX mirrors what librpma's servers do after registering FsDAX
// memory: rpma_mr_advise(mr, 0, mr_size, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
// IBV_ADVISE_MR_FLAG_FLUSH). Memory registered with on-demand paging (ODP,
// which FsDAX needs) gets its pages faulted in now, for writing; other
// memory needs nothing.
func AdviseFsDAX(m *mr.Local) error {
	if !m.ODP() {
		return nil
	}
	if err := m.Advise(0, m.Size(), mr.AdvicePrefetchWrite, mr.AdviseFlagFlush); err != nil {
		return fmt.Errorf("mr.Local.Advise: %w", err)
	}
	return nil
}
