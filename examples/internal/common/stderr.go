// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"io"
	"os"
)

// stderr is where the helpers report what librpma's examples print on
// stderr (a variable for the tests).
var stderr io.Writer = os.Stderr
