// Package cbuild compiles the C programs that tests run beside the
// library (librpma's side of the interop tests, the benchmarks' C
// programs, the descriptor checks against librpma) and can keep each
// binary in a cache keyed by everything that went into it.
//
// Why: under TCG one compilation inside the VM takes 5-60 s, and make test
// compiled the same programs again in every VM tier (about 170 s of guest
// time per tier). The guest sees the host's files and, but in the Debian 13
// tier, runs the host's userspace. So scripts/test.sh points RPMA_C_CACHE
// at a directory that the host tier fills, where a compilation takes a
// fraction of a second, and the VM tiers read it. A binary is reused only
// when the compiler, the identity of the system headers and libraries, the
// arguments and every file of the sources' directory are the same;
// anything else (another userspace, an edited header, another flag) misses,
// and the program is compiled where the test runs, as without a cache.
package cbuild
