// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-utils.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// CString returns b up to its first NUL byte, or all of b if it has none:
// what printf("%s") shows of a buffer that is known to be terminated
// somewhere (the examples print received strings this way).
func CString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// cStringStrict is CString for a field that must be NUL-terminated within b.
func cStringStrict(what string, b []byte) (string, error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", fmt.Errorf("%s: no NUL within %d bytes: %w", what, len(b), ErrInvalid)
	}
	return string(b[:i]), nil
}

// checkCString checks that s can be stored as a NUL-terminated C string of
// at most max characters (plus the NUL).
func checkCString(what, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s: %d bytes > %d: %w", what, len(s), max, ErrInvalid)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s: contains a NUL byte: %w", what, ErrInvalid)
	}
	return nil
}

// Strncpy mirrors strncpy(dst, src, n) on a Go buffer: it copies src up to
// its first NUL and at most n bytes, then zero-fills dst up to n. As in C, dst
// is not NUL-terminated when src has n or more bytes. n is clipped to
// len(dst).
func Strncpy(dst []byte, src string, n int) {
	n = min(n, len(dst))
	if i := strings.IndexByte(src, 0); i >= 0 {
		src = src[:i]
	}
	c := copy(dst[:n], src)
	clear(dst[c:n])
}

// StrtoulNoError mirrors strtoul_noerror() of librpma's
// examples/common/common-utils.c (strtoul(in, NULL, 10) that exits on
// ERANGE), which the examples use to parse counters, rounds, seeds, sleep
// times and <pmem-offset>. It keeps strtoul's leniency, so a Go example
// accepts exactly what the C one does:
//
//   - leading white space (isspace: space, \t, \n, \v, \f, \r) is skipped;
//   - one optional '+' or '-'; a '-' negates the result modulo 2^64
//     ("-1" is 18446744073709551615);
//   - the longest run of decimal digits is converted and the rest is
//     ignored ("12abc" is 12); no digits at all gives 0 ("abc" is 0);
//   - a magnitude above ULONG_MAX is the only error (C prints
//     "strtoul(%s) overflowed\n" and exits with -1).
//
// The 10 and 11 clients and 06's seed call strtoul directly with the same
// result.
func StrtoulNoError(in string) (uint64, error) {
	s := in
	for len(s) > 0 && isCSpace(s[0]) {
		s = s[1:]
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v uint64
	for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
		d := uint64(s[0] - '0')
		if v > (math.MaxUint64-d)/10 {
			return math.MaxUint64, fmt.Errorf("strtoul(%s) overflowed: %w", in, ErrInvalid)
		}
		v = v*10 + d
		s = s[1:]
	}
	if neg {
		v = -v
	}
	return v, nil
}

func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
