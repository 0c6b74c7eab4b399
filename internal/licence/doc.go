// Package licence holds no code: its test checks the module's licensing,
// that LICENSE is BSD-3-Clause and NOTICE carries librpma's notice, and
// that every file ported from librpma (github.com/pmem/rpma) keeps the
// copyright lines of the librpma files it names as its sources, as
// librpma's BSD-3-Clause licence requires of redistributions in source
// form.
//
// Which files are ports is decided by rules on their paths (see the test),
// not by a list, so that a new example or C program cannot be added without
// its notice; and any other file whose header claims to be ported from
// librpma is checked the same way.
package licence
