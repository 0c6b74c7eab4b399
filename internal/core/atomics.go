package core

import (
	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Remote atomics: compare-and-swap and fetch-and-add of an 8-byte word of
// the other side's memory (IBV_WR_ATOMIC_CMP_AND_SWP and
// IBV_WR_ATOMIC_FETCH_AND_ADD), which librpma does not have. The target
// region needs UsageAtomicDst (IBV_ACCESS_REMOTE_ATOMIC), known from an
// extended descriptor; the word's old value lands in 8 bytes of a local
// region registered with UsageReadDst (the device writes it, as it writes
// a read's destination).

// atomicSize is the size and alignment of the word of a remote atomic.
const atomicSize = 8

// CompareAndSwap is conn.Conn.CompareAndSwap's core; see there.
func (c *Conn) CompareAndSwap(dst *RemoteMR, dstOff int, result *MR, resultOff int, compare, swap uint64, flags rpma.CompletionFlags, ctx uint64) error {
	return c.remoteAtomic("compare_and_swap", ibv.OpAtomicCmpAndSwp, dst, dstOff, result, resultOff, compare, swap, flags, ctx, nil)
}

// FetchAndAdd is conn.Conn.FetchAndAdd's core; see there.
func (c *Conn) FetchAndAdd(dst *RemoteMR, dstOff int, result *MR, resultOff int, add uint64, flags rpma.CompletionFlags, ctx uint64) error {
	return c.remoteAtomic("fetch_and_add", ibv.OpAtomicFetchAdd, dst, dstOff, result, resultOff, add, 0, flags, ctx, nil)
}

func (c *Conn) remoteAtomic(op string, aop ibv.SendOp, dst *RemoteMR, dstOff int, result *MR, resultOff int, compareAdd, swap uint64, flags rpma.CompletionFlags, ctx uint64, cl *opClaim) error {
	if err := c.checkRemoteAtomic(op, dst, dstOff, result, resultOff, flags); err != nil {
		return err
	}
	laddr, lkey := result.at(resultOff)
	raddr, rkey := dst.at(dstOff)
	stat := statFetchAndAdd
	if aop == ibv.OpAtomicCmpAndSwp {
		stat = statCompareAndSwap
	}
	return c.postSend(op, postRemoteAtomic, signaled(flags), ctx, &sendArgs{op: aop, laddr: laddr, lkey: lkey, raddr: raddr, rkey: rkey, value: compareAdd, swap: swap, stat: stat}, cl)
}

// checkRemoteAtomic checks everything a remote atomic needs before it is
// posted: a usable connection on a device with atomics, valid flags, a
// result region of the connection's peer with UsageReadDst and 8 bytes
// at resultOff, and an 8-byte aligned word of dst within it, which has
// UsageAtomicDst.
func (c *Conn) checkRemoteAtomic(op string, dst *RemoteMR, dstOff int, result *MR, resultOff int, flags rpma.CompletionFlags) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if c.peer.atomicCap == ibv.AtomicNone {
		return rpmaerr.New(op, rpma.CodeNoSupp, 0, "the device has no remote atomics (atomic_cap IBV_ATOMIC_NONE)")
	}
	if _, err := checkFlags(op, flags); err != nil {
		return err
	}
	if result == nil {
		return rpmaerr.Inval(op, "no local memory region for the old value")
	}
	if dst == nil {
		return rpmaerr.Inval(op, "no remote memory region")
	}
	if _, _, err := localRange(op, c.peer, result, UsageReadDst, resultOff, atomicSize); err != nil {
		return err
	}
	return alignedRemoteWord(op, dst, dstOff, UsageAtomicDst, atomicSize)
}
