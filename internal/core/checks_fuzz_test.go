package core

import (
	"math"
	"testing"

	"github.com/gorpma/rpma/rpma"
)

// The fuzz tests below hold each fast argument predicate of the data path
// (checks.go: validFlags, MR.fits, RemoteMR.fits, Conn.flushFits, and the
// predicates the operations of datapath.go build from them) against the
// slow check that explains a refusal (checkFlags, localRange, remoteRange,
// checkTransfer, checkFlush, checkAtomicWrite, checkWriteAndFlush,
// checkSend): the fast one must accept exactly what the slow one accepts
// (a nil error). The one difference by design is the 0-byte operation
// without regions (a nil MR or RemoteMR, offset and length 0), which only
// the slow check accepts; the data path then runs it, so the fast
// predicate may refuse it but must refuse nothing else the slow check
// accepts, and accept nothing it refuses. Neither checks a closed
// connection the same way (the fast path leaves that to lockData), so the
// connection here is open.
//
// Everything is built in Go (no device): regions are MR and RemoteMR
// values with the fields the checks read. The seed corpus runs with plain
// go test; go test -fuzz=FuzzX ./internal/core explores further.

// fuzzSizes, fuzzOffs and fuzzLens are the boundaries the seeds combine:
// empty, small and 8-byte-aligned regions, one past 2^32, and the ends of
// the integer ranges.
var (
	fuzzSizes = []uint64{0, 7, 8, 16, 1<<32 + 8, math.MaxUint64}
	fuzzOffs  = []int64{-8, -1, 0, 1, 7, 8, 9, 16, 1 << 32, math.MaxInt64}
	fuzzLens  = []int64{-1, 0, 1, 8, 9, maxLength, maxLength + 1, math.MaxInt64}
)

// fuzzPeers are the connection's peer and another one.
var fuzzPeers = [2]*Peer{{}, {}}

// fuzzMR builds a local region from fuzzed fields: none when absent;
// otherwise registered on the connection's peer or the other, in the
// lifecycle state state%4 (open, never opened, closing, close failed),
// with usage and size.
func fuzzMR(absent, otherPeer bool, state uint8, usage uint16, size uint64) *MR {
	if absent {
		return nil
	}
	m := &MR{peer: fuzzPeers[0], usage: int(usage), size: size}
	if otherPeer {
		m.peer = fuzzPeers[1]
	}
	m.state.Store(int32(state % 4))
	return m
}

// fuzzRemote builds a remote region from fuzzed fields; none when absent.
func fuzzRemote(absent bool, raddr uint64, usage uint16, size uint64) *RemoteMR {
	if absent {
		return nil
	}
	return &RemoteMR{raddr: raddr, size: size, rkey: 1, usage: int(usage)}
}

// fuzzConn is an open connection of fuzzPeers[0].
func fuzzConn(nativeFlush, directWriteToPMem bool) *Conn {
	c := &Conn{dl: &dataLock{}, peer: fuzzPeers[0], nativeFlush: nativeFlush}
	c.directWriteToPMem.Store(directWriteToPMem)
	return c
}

// agree fails t unless fast accepts exactly what the slow check's err
// accepts; noRegions says the input is a 0-byte operation without
// regions, which the slow check may accept alone.
func agree(t *testing.T, fast bool, err error, noRegions bool) {
	t.Helper()
	switch {
	case fast && err != nil:
		t.Fatalf("the fast predicate accepts what the slow check refuses: %v", err)
	case !fast && err == nil && !noRegions:
		t.Fatal("the slow check accepts what the fast predicate refuses")
	}
}

// FuzzFlags: validFlags and checkFlags, and signaled and checkFlags' user.
func FuzzFlags(f *testing.F) {
	for _, fl := range []int{math.MinInt, -1, 0, 1, 2, 3, 4, 7, math.MaxInt} {
		f.Add(fl)
	}
	f.Fuzz(func(t *testing.T, fl int) {
		flags := rpma.CompletionFlags(fl)
		user, err := checkFlags("fuzz", flags)
		agree(t, validFlags(flags), err, false)
		if err == nil && user != signaled(flags) {
			t.Fatalf("flags %d: checkFlags says signaled %v, signaled %v", fl, user, signaled(flags))
		}
	})
}

// usageSeeds are usages for a check that needs the bit need: none, that
// bit alone, every bit, and every bit but that one.
func usageSeeds(need int) []uint16 {
	all := usageAll
	return []uint16{0, uint16(need), uint16(all), uint16(all &^ need)}
}

// FuzzLocalRange: MR.fits and localRange.
func FuzzLocalRange(f *testing.F) {
	for _, size := range fuzzSizes {
		for _, off := range fuzzOffs {
			for _, n := range fuzzLens {
				f.Add(false, false, uint8(lifeOpen), uint16(UsageWriteSrc), uint8(2), size, off, n)
			}
		}
	}
	for _, u := range usageSeeds(UsageRecv) {
		f.Add(false, false, uint8(lifeOpen), u, uint8(7), uint64(8), int64(0), int64(8))
	}
	for st := range uint8(4) {
		f.Add(false, false, st, uint16(UsageSend), uint8(6), uint64(8), int64(0), int64(8))
	}
	f.Add(false, true, uint8(lifeOpen), uint16(UsageSend), uint8(6), uint64(8), int64(0), int64(8))
	f.Add(true, false, uint8(lifeOpen), uint16(0), uint8(0), uint64(0), int64(0), int64(0))
	f.Add(true, false, uint8(lifeOpen), uint16(0), uint8(0), uint64(0), int64(0), int64(1))
	f.Fuzz(func(t *testing.T, absent, otherPeer bool, state uint8, usage uint16, needBit uint8, size uint64, off, n int64) {
		m := fuzzMR(absent, otherPeer, state, usage, size)
		need := 1 << (needBit % 10)
		_, _, err := localRange("fuzz", fuzzPeers[0], m, need, int(off), int(n))
		agree(t, m.fits(fuzzPeers[0], need, int(off), int(n)), err, m == nil && off == 0 && n == 0)
	})
}

// FuzzRemoteRange: RemoteMR.fits and remoteRange, for the non-zero needs
// of the fast path (remoteRange's need 0, any usage, is the flush's,
// which FuzzFlush covers).
func FuzzRemoteRange(f *testing.F) {
	for _, size := range fuzzSizes {
		for _, off := range fuzzOffs {
			for _, n := range fuzzLens {
				f.Add(false, uint16(UsageReadSrc), uint8(0), size, off, n)
			}
		}
	}
	for _, u := range usageSeeds(UsageWriteDst) {
		f.Add(false, u, uint8(3), uint64(8), int64(0), int64(8))
	}
	f.Add(true, uint16(0), uint8(0), uint64(0), int64(0), int64(0))
	f.Add(true, uint16(0), uint8(0), uint64(0), int64(1), int64(0))
	f.Fuzz(func(t *testing.T, absent bool, usage uint16, needBit uint8, size uint64, off, n int64) {
		r := fuzzRemote(absent, 0, usage, size)
		need := 1 << (needBit % 10)
		_, _, err := remoteRange("fuzz", r, need, int(off), int(n))
		agree(t, r.fits(need, int(off), int(n)), err, r == nil && off == 0 && n == 0)
	})
}

// FuzzTransfer: the fast predicate of read, write and write with
// immediate data (Conn.read, Conn.write: flags, then the local region,
// then the remote one) and checkTransfer.
func FuzzTransfer(f *testing.F) {
	for _, size := range fuzzSizes {
		for _, off := range fuzzOffs {
			for _, n := range fuzzLens {
				f.Add(false, false, false, uint8(lifeOpen), uint16(usageAll), uint16(usageAll), size, size, off, off, n, 3, true)
			}
		}
	}
	for _, fl := range []int{0, 1, 2, 3, 4} {
		f.Add(false, false, false, uint8(lifeOpen), uint16(UsageReadDst), uint16(UsageReadSrc), uint64(8), uint64(8), int64(0), int64(0), int64(8), fl, false)
	}
	for _, lu := range usageSeeds(UsageWriteSrc) {
		for _, ru := range usageSeeds(UsageWriteDst) {
			f.Add(false, false, false, uint8(lifeOpen), lu, ru, uint64(8), uint64(8), int64(0), int64(0), int64(8), 3, true)
		}
	}
	for _, la := range []bool{false, true} {
		for _, ra := range []bool{false, true} {
			f.Add(la, ra, false, uint8(lifeOpen), uint16(usageAll), uint16(usageAll), uint64(8), uint64(8), int64(0), int64(0), int64(0), 1, true)
		}
	}
	f.Add(false, false, true, uint8(lifeOpen), uint16(usageAll), uint16(usageAll), uint64(8), uint64(8), int64(0), int64(0), int64(8), 1, true)
	f.Fuzz(func(t *testing.T, lAbsent, rAbsent, otherPeer bool, state uint8, lusage, rusage uint16, lsize, rsize uint64, loff, roff, n int64, fl int, write bool) {
		lneed, rneed := UsageReadDst, UsageReadSrc
		if write {
			lneed, rneed = UsageWriteSrc, UsageWriteDst
		}
		c := fuzzConn(false, false)
		local := fuzzMR(lAbsent, otherPeer, state, lusage, lsize)
		remote := fuzzRemote(rAbsent, 0, rusage, rsize)
		flags := rpma.CompletionFlags(fl)
		fast := validFlags(flags) && local.fits(c.peer, lneed, int(loff), int(n)) && remote.fits(rneed, int(roff), int(n))
		err := c.checkTransfer("fuzz", local, int(loff), lneed, remote, int(roff), rneed, int(n), flags)
		agree(t, fast, err, local == nil && remote == nil && loff == 0 && roff == 0 && n == 0)
	})
}

// FuzzFlush: Conn.flushFits (with validFlags, as Conn.flush) and
// checkFlush, natively and emulated (the emulation reads 8 bytes at the
// flushed range's start), to persistence and to visibility.
func FuzzFlush(f *testing.F) {
	for _, size := range fuzzSizes {
		for _, off := range fuzzOffs {
			for _, n := range fuzzLens {
				f.Add(false, uint16(usageAll), size, off, n, 0, 3, false, true)
				f.Add(false, uint16(usageAll), size, off, n, 1, 3, true, false)
			}
		}
	}
	for _, typ := range []int{-1, 0, 1, 2} {
		for _, u := range usageSeeds(UsageFlushPersistent) {
			for _, dw := range []bool{false, true} {
				f.Add(false, u, uint64(8), int64(0), int64(8), typ, 1, false, dw)
			}
		}
		for _, u := range usageSeeds(UsageFlushVisibility) {
			f.Add(false, u, uint64(8), int64(0), int64(0), typ, 1, false, false)
		}
	}
	f.Add(true, uint16(0), uint64(0), int64(0), int64(0), 1, 1, true, true)
	f.Fuzz(func(t *testing.T, absent bool, usage uint16, size uint64, off, n int64, typ, fl int, nativeFlush, directWriteToPMem bool) {
		c := fuzzConn(nativeFlush, directWriteToPMem)
		dst := fuzzRemote(absent, 0, usage, size)
		ft, flags := rpma.FlushType(typ), rpma.CompletionFlags(fl)
		fast := validFlags(flags) && c.flushFits(dst, int(off), int(n), ft)
		agree(t, fast, c.checkFlush("fuzz", dst, int(off), int(n), ft, flags), false)
	})
}

// atomicWriteFits is Conn.atomicWrite's fast predicate (datapath.go),
// written out again: keep the two alike.
func atomicWriteFits(dst *RemoteMR, dstOff int, flags rpma.CompletionFlags) bool {
	const n = rpma.AtomicWriteAlignment
	return validFlags(flags) && dstOff%n == 0 && dst.fits(UsageWriteDst, dstOff, n) && (dst.raddr+uint64(dstOff))%n == 0
}

// FuzzAtomicWrite: Conn.atomicWrite's fast predicate and
// checkAtomicWrite: an aligned 8-byte word (offset and remote address)
// within a region with UsageWriteDst.
func FuzzAtomicWrite(f *testing.F) {
	for _, size := range fuzzSizes {
		for _, off := range fuzzOffs {
			for _, raddr := range []uint64{0, 4, 8, math.MaxUint64 - 7} {
				f.Add(false, uint16(UsageWriteDst), raddr, size, off, 3)
			}
		}
	}
	for _, u := range usageSeeds(UsageWriteDst) {
		f.Add(false, u, uint64(0), uint64(8), int64(0), 1)
	}
	f.Add(true, uint16(0), uint64(0), uint64(0), int64(0), 1)
	f.Add(false, uint16(UsageWriteDst), uint64(0), uint64(8), int64(0), 0)
	f.Fuzz(func(t *testing.T, absent bool, usage uint16, raddr, size uint64, off int64, fl int) {
		c := fuzzConn(false, false)
		dst := fuzzRemote(absent, raddr, usage, size)
		flags := rpma.CompletionFlags(fl)
		agree(t, atomicWriteFits(dst, int(off), flags), c.checkAtomicWrite("fuzz", dst, int(off), flags), false)
	})
}

// FuzzWriteAndFlush: Conn.writeAndFlush's fast predicate (a write's, then
// the flush's) and checkWriteAndFlush.
func FuzzWriteAndFlush(f *testing.F) {
	for _, size := range fuzzSizes {
		for _, off := range fuzzOffs {
			for _, n := range fuzzLens {
				f.Add(false, false, uint16(usageAll), uint16(usageAll), size, size, off, off, n, 1, 3, false, false)
			}
		}
	}
	for _, lu := range usageSeeds(UsageWriteSrc) {
		for _, ru := range append(usageSeeds(UsageWriteDst), usageSeeds(UsageFlushPersistent)...) {
			f.Add(false, false, lu, ru, uint64(8), uint64(8), int64(0), int64(0), int64(8), 0, 1, true, true)
		}
	}
	for _, la := range []bool{false, true} {
		for _, ra := range []bool{false, true} {
			f.Add(la, ra, uint16(usageAll), uint16(usageAll), uint64(8), uint64(8), int64(0), int64(0), int64(0), 1, 1, true, true)
		}
	}
	f.Fuzz(func(t *testing.T, lAbsent, rAbsent bool, lusage, rusage uint16, lsize, rsize uint64, loff, roff, n int64, typ, fl int, nativeFlush, directWriteToPMem bool) {
		c := fuzzConn(nativeFlush, directWriteToPMem)
		src := fuzzMR(lAbsent, false, lifeOpen, lusage, lsize)
		dst := fuzzRemote(rAbsent, 0, rusage, rsize)
		ft, flags := rpma.FlushType(typ), rpma.CompletionFlags(fl)
		fast := validFlags(flags) && src.fits(c.peer, UsageWriteSrc, int(loff), int(n)) && dst.fits(UsageWriteDst, int(roff), int(n)) && c.flushFits(dst, int(roff), int(n), ft)
		agree(t, fast, c.checkWriteAndFlush("fuzz", dst, int(roff), src, int(loff), int(n), ft, flags), false)
	})
}

// FuzzSend: Conn.send's fast predicate and checkSend (Conn.recv's is
// localRange's, which FuzzLocalRange covers).
func FuzzSend(f *testing.F) {
	for _, off := range fuzzOffs {
		for _, n := range fuzzLens {
			f.Add(false, uint8(lifeOpen), uint16(UsageSend), uint64(16), off, n, 1)
		}
	}
	for _, u := range usageSeeds(UsageSend) {
		f.Add(false, uint8(lifeOpen), u, uint64(8), int64(0), int64(8), 3)
	}
	f.Add(true, uint8(lifeOpen), uint16(0), uint64(0), int64(0), int64(0), 3)
	f.Add(true, uint8(lifeOpen), uint16(0), uint64(0), int64(0), int64(0), 0)
	f.Fuzz(func(t *testing.T, absent bool, state uint8, usage uint16, size uint64, off, n int64, fl int) {
		c := fuzzConn(false, false)
		src := fuzzMR(absent, false, state, usage, size)
		flags := rpma.CompletionFlags(fl)
		fast := validFlags(flags) && src.fits(c.peer, UsageSend, int(off), int(n))
		err := c.checkSend("fuzz", src, int(off), int(n), flags)
		agree(t, fast, err, src == nil && off == 0 && n == 0)
	})
}
