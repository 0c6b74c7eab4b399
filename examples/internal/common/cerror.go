// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import "fmt"

// CError returns an error whose text is the message of librpma's C
// example, verbatim (which may start with a capital letter, unlike Go's
// error strings).
func CError(format string, args ...any) error { return fmt.Errorf(format, args...) }
