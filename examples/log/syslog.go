//go:build !windows && !plan9

// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/log/log-example.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package main

import (
	"io"
	"log/syslog"
)

// openSyslog connects to the system log, tagged "rpma". Without one it
// returns a nil io.WriteCloser, not a nil *syslog.Writer in a non-nil
// interface.
func openSyslog() (io.WriteCloser, error) {
	w, err := syslog.New(syslog.LOG_USER|syslog.LOG_DEBUG, "rpma")
	if err != nil {
		return nil, err
	}
	return w, nil
}
