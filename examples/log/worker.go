// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/log/log-worker.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package main

import "github.com/gorpma/rpma/rpma"

// logWorkerIsDoingSomething logs messages at several levels through the
// library's internal entry point (librpma's RPMA_LOG_* macros, here
// rpma.Logf), as log-worker.c does, and returns how many it logged.
func logWorkerIsDoingSomething() int {
	rpma.Logf(rpma.LogError, "Error message")
	rpma.Logf(rpma.LogWarning, "Warning message")
	rpma.Logf(rpma.LogDebug, "Debug message")
	rpma.Logf(rpma.LogNotice, "Just a notice")
	rpma.Logf(rpma.LogWarning, "Important warning about value: %d", 720401)
	rpma.Logf(rpma.LogError, "Error due to order %x", 102)
	rpma.Logf(rpma.LogInfo, "I feel lost and do not know what to say, Master")
	return 7
}
