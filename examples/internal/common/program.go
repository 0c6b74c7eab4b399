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
	"path/filepath"

	"github.com/gorpma/rpma/rpma"
)

// The beginning and the end of every example's main, as in librpma's
// examples: the usage line when arguments are missing, the library's log
// thresholds, and the exit status of a failed run.

// Start begins an example's main: with fewer than argc arguments
// (os.Args, the program's name included, as C's argc) it prints usage, a
// format taking the program's name ("usage: %s <addr> <port>\n"), to
// stderr and exits with status 255 (C's -1). Then it sets the library's
// log thresholds (primary and auxiliary) to INFO, as every C example does,
// so the library's INFO messages and above appear on stderr.
func Start(argc int, usage string) {
	if len(os.Args) < argc {
		fmt.Fprintf(os.Stderr, usage, os.Args[0])
		os.Exit(255)
	}
	_ = rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo)
	_ = rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogInfo)
}

// Exit ends an example's main after a failure: with an error it prints
// "<program>: <error>" to stderr and exits with status 255 (C's -1, what
// most of librpma's examples return on any failure); without one it
// returns.
func Exit(err error) { ExitStatus(err, 255) }

// ExitRPMA is Exit with the status librpma's 09, 10 and 11 return: the
// librpma error code of err (as an exit status), else 255 (-1).
func ExitRPMA(err error) { ExitStatus(err, RPMAStatus(err)) }

// ExitStatus is Exit with exit status status.
func ExitStatus(err error, status int) {
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
	os.Exit(status)
}

// RPMAStatus is the exit status of a C example that returns the librpma
// error code of a failure: that code's low byte, or 255 (-1) for an error
// that has none (nil too).
func RPMAStatus(err error) int {
	if code, ok := rpma.CodeOf(err); ok {
		return int(code) & 0xff
	}
	return 255
}

// Arg returns the i-th command-line argument (os.Args[i]), or "" when
// there are fewer: an optional argument.
func Arg(i int) string {
	if i < len(os.Args) {
		return os.Args[i]
	}
	return ""
}

// StrtoulArg mirrors strtoul_noerror(argv[i]) of librpma's examples for an
// optional numeric argument (StrtoulNoError): 0 when there is none. On an
// overflow it prints "strtoul(<argument>) overflowed" to stderr and exits
// with status 255, as the C function does.
func StrtoulArg(i int) uint64 {
	if i >= len(os.Args) {
		return 0
	}
	v, err := StrtoulNoError(os.Args[i])
	if err != nil {
		fmt.Fprintf(os.Stderr, "strtoul(%s) overflowed\n", os.Args[i])
		os.Exit(255)
	}
	return v
}
