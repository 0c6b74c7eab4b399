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
)

// CloseWith calls close and adds its error, if any, to *err as
// "what: error". It is for deferred closes, which must not lose the error
// of the function they end:
//
//	func run() (err error) {
//		...
//		defer common.CloseWith(&err, "mr.Local.Dereg", m.Dereg)
func CloseWith(err *error, what string, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}

// closer is one step of closeAll: what to close, and its name for errors.
type closer struct {
	what  string
	close func() error
}

// closeAll returns a close function for a helper's resources: it closes
// each in turn, children first, and reports all their errors (CloseWith).
func closeAll(cs ...closer) func() error {
	return func() (err error) {
		for _, c := range cs {
			CloseWith(&err, c.what, c.close)
		}
		return err
	}
}
