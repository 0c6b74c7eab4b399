//go:build windows || plan9

// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/log/log-example.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package main

import (
	"errors"
	"io"
	"runtime"
)

// openSyslog: Go's log/syslog does not exist on this system.
func openSyslog() (io.WriteCloser, error) {
	return nil, errors.New("log/syslog is not available on " + runtime.GOOS)
}
