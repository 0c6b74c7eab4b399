package core

import (
	"strconv"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// The argument checks of the data path. Each operation first runs a fast
// check (small functions the compiler inlines: plain comparisons, nothing
// built); only when it fails do the full checks below run, which find
// what is wrong and say it, or accept what the fast check does not cover
// (0-byte operations without regions).

// maxLength is the largest length a scatter/gather element can carry.
const maxLength = 1<<32 - 1

// validFlags is the fast form of checkFlags.
func validFlags(flags rpma.CompletionFlags) bool {
	return flags > 0 && flags <= rpma.CompletionAlways
}

// signaled reports whether valid flags ask for a completion on success
// (RPMA_F_COMPLETION_ON_SUCCESS = ALWAYS & ~ON_ERROR).
func signaled(flags rpma.CompletionFlags) bool {
	return flags&(rpma.CompletionAlways&^rpma.CompletionOnError) != 0
}

// fits is the fast form of localRange: m is a live region of p with the
// usage need, and [off, off+n) lies in it.
func (m *MR) fits(p *Peer, need, off, n int) bool {
	return m != nil && m.peer == p && m.usage&need != 0 && off >= 0 && n >= 0 && n <= maxLength &&
		uint64(off)+uint64(n) <= m.size && m.state.Load() == lifeOpen
}

// fits is the fast form of remoteRange.
func (r *RemoteMR) fits(need, off, n int) bool {
	return r != nil && r.usage&need != 0 && off >= 0 && n >= 0 && n <= maxLength && uint64(off)+uint64(n) <= r.size
}

// at returns the address and key of offset off of m; zeros for nil.
func (m *MR) at(off int) (uint64, uint32) {
	if m == nil {
		return 0, 0
	}
	return m.addr + uint64(off), m.lkey
}

// at returns the address and key of offset off of r; zeros for nil.
func (r *RemoteMR) at(off int) (uint64, uint32) {
	if r == nil {
		return 0, 0
	}
	return r.raddr + uint64(off), r.rkey
}

// flushFits is the fast form of flushAllowed and flushRange.
func (c *Conn) flushFits(dst *RemoteMR, off, n int, typ rpma.FlushType) bool {
	var need int
	switch typ {
	case rpma.FlushPersistent:
		if !c.directWriteToPMem.Load() {
			return false
		}
		need = UsageFlushPersistent
	case rpma.FlushVisibility:
		need = UsageFlushVisibility
	default:
		return false
	}
	return dst.fits(need, off, n) && (c.nativeFlush || dst.fits(need, off, 8))
}

// usable is the start of every slow check: a nil, never-opened or
// closed connection.
func (c *Conn) usable(op string) error {
	if c == nil {
		return errNil(op, "connection")
	}
	d := c.dl
	if d == nil {
		return errClosed(op, "connection")
	}
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return errClosed(op, "connection")
	}
	return nil
}

// checkFlags checks the completion flags of a data-path call: librpma
// requires them non-zero; only the RPMA_F_COMPLETION_* bits exist.
func checkFlags(op string, flags rpma.CompletionFlags) (user bool, err error) {
	if flags <= 0 || flags > rpma.CompletionAlways {
		return false, rpmaerr.Inval(op, "completion flags %d: want rpma.CompletionOnError or rpma.CompletionAlways", int(flags))
	}
	// RPMA_F_COMPLETION_ON_SUCCESS = ALWAYS & ~ON_ERROR asks for a
	// signaled work request.
	return flags&(rpma.CompletionAlways&^rpma.CompletionOnError) != 0, nil
}

// localRange checks a local region for an operation of p's that needs
// the usage bit need, and [off, off+n) of it, and returns its address and
// key. A nil m stands for no memory (0-byte operations): off and n must
// be 0. The region must belong to p (its protection domain: the device
// refuses another's lkey, and breaks the connection for it) and have the
// usage (librpma does not check it; a receive buffer posted as a send
// source would go out).
func localRange(op string, p *Peer, m *MR, need, off, n int) (uint64, uint32, error) {
	if m == nil {
		if off != 0 || n != 0 {
			return 0, 0, rpmaerr.Inval(op, "no local memory region: offset and length must be 0")
		}
		return 0, 0, nil
	}
	if m.closed() {
		return 0, 0, errClosed(op, "memory region")
	}
	if m.peer != p {
		return 0, 0, rpmaerr.Inval(op, "the local memory region was registered on another peer (protection domain)")
	}
	if m.usage&need == 0 {
		return 0, 0, rpmaerr.Inval(op, "the local memory region was registered without %s, which %s needs", usageName(need), op)
	}
	if err := checkRange(op, "local memory region", off, n, m.size); err != nil {
		return 0, 0, err
	}
	return m.addr + uint64(off), m.lkey, nil
}

// remoteRange checks [off, off+n) of a remote region whose descriptor must
// have one of the usage bits need (0: any), and returns its address and
// key; nil as for localRange.
func remoteRange(op string, r *RemoteMR, need, off, n int) (uint64, uint32, error) {
	if r == nil {
		if off != 0 || n != 0 {
			return 0, 0, rpmaerr.Inval(op, "no remote memory region: offset and length must be 0")
		}
		return 0, 0, nil
	}
	if need != 0 && r.usage&need == 0 {
		return 0, 0, rpmaerr.Inval(op, "the remote memory region's descriptor lacks %s, which %s needs (the other side did not register it for that)", usageName(need), op)
	}
	if err := checkRange(op, "remote memory region", off, n, r.size); err != nil {
		return 0, 0, err
	}
	return r.raddr + uint64(off), r.rkey, nil
}

// usageName names a usage bit as package mr exports it.
func usageName(u int) string {
	switch u {
	case UsageReadSrc:
		return "mr.UsageReadSrc"
	case UsageReadDst:
		return "mr.UsageReadDst"
	case UsageWriteSrc:
		return "mr.UsageWriteSrc"
	case UsageWriteDst:
		return "mr.UsageWriteDst"
	case UsageFlushVisibility:
		return "mr.UsageFlushVisibility"
	case UsageFlushPersistent:
		return "mr.UsageFlushPersistent"
	case UsageSend:
		return "mr.UsageSend"
	case UsageRecv:
		return "mr.UsageRecv"
	case UsageAtomicDst:
		return "mr.UsageAtomicDst"
	}
	return "usage 0x" + strconv.FormatInt(int64(u), 16)
}

// bothOrNeither is librpma's rule for read and write: both regions, or
// neither (a 0-byte operation).
func bothOrNeither(op string, local *MR, remote *RemoteMR) error {
	if (local == nil) != (remote == nil) {
		return rpmaerr.Inval(op, "give both memory regions, or neither for a 0-byte operation")
	}
	return nil
}

// flushAllowed is librpma's rule for rpma_flush: PERSISTENT needs the
// applied remote peer configuration (direct write to PMem) and the remote
// region's FLUSH_TYPE_PERSISTENT usage; VISIBILITY needs its
// FLUSH_TYPE_VISIBILITY usage.
func (c *Conn) flushAllowed(op string, dst *RemoteMR, typ rpma.FlushType) error {
	switch typ {
	case rpma.FlushPersistent:
		if !c.directWriteToPMem.Load() {
			return rpmaerr.NoSupp(op, "Connection does not support flush to persistency. Check if the remote node supports direct write to persistent memory.")
		}
		if dst.usage&UsageFlushPersistent == 0 {
			return rpmaerr.NoSupp(op, "The remote memory region does not support flushing to persistency")
		}
	case rpma.FlushVisibility:
		if dst.usage&UsageFlushVisibility == 0 {
			return rpmaerr.NoSupp(op, "The remote memory region does not support flushing to global visibility")
		}
	default:
		return rpmaerr.Inval(op, "unknown flush type %d", int(typ))
	}
	return nil
}

// flushRange checks the flushed range and, for the emulated flush, the
// 8-byte read at its start.
func (c *Conn) flushRange(op string, dst *RemoteMR, off, n int) (uint64, uint32, error) {
	raddr, rkey, err := remoteRange(op, dst, 0, off, n)
	if err != nil {
		return 0, 0, err
	}
	if !c.nativeFlush {
		if _, _, err := remoteRange(op, dst, 0, off, 8); err != nil {
			return 0, 0, rpmaerr.Inval(op, "the emulated flush reads 8 bytes at offset %d, outside the remote region of %d bytes", off, dst.size)
		}
	}
	return raddr, rkey, nil
}

func flushPlacement(typ rpma.FlushType) uint8 {
	if typ == rpma.FlushPersistent {
		return ibv.FlushPersistent
	}
	return ibv.FlushGlobal
}
