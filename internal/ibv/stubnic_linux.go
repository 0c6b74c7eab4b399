//go:build rpma_stubnic && linux && cgo && !rpma_fake

package ibv

/*
#include "rpma_stubnic.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// StubNIC is a stub RDMA provider in memory (rpma_stubnic.h, build tag
// rpma_stubnic): a device context, a CQ and a QP sending to it, whose
// provider ops complete every post at once. Its Context, CQ and QP are
// the package's real types, so that their posts and polls go through the
// real cgo wrappers and C helpers (one crossing each, ibv_post_send and
// ibv_poll_cq dispatching through the context's ops) and cost, on the
// host CPU, what they cost over a hardware provider less the provider's
// own work. Only posts, polls and ReqNotify work on them: do not Destroy
// them (libibverbs did not make them), Close the StubNIC instead.
type StubNIC struct {
	n       *C.struct_rpma_stubnic
	Context *Context
	CQ      *CQ
	QP      *QP
}

// NewStubNIC makes a stub whose CQ holds depth completions (a power of
// two); a signaled post that would overflow it fails with ENOMEM.
func NewStubNIC(depth int) (*StubNIC, error) {
	n := C.rpma_stubnic_new(C.uint32_t(depth))
	if n == nil {
		return nil, errors.New("ibv: stub NIC: depth must be a power of two, and memory available")
	}
	return &StubNIC{
		n:       n,
		Context: &Context{c: &n.ctx},
		CQ:      &CQ{c: &n.cq, h: C.uintptr_t(uintptr(unsafe.Pointer(&n.cq)))},
		QP:      &QP{c: &n.qp, h: C.uintptr_t(uintptr(unsafe.Pointer(&n.qp)))},
	}, nil
}

// Close frees the stub; its Context, CQ and QP must not be used after.
func (s *StubNIC) Close() {
	if s == nil || s.n == nil {
		return
	}
	C.rpma_stubnic_free(s.n)
	s.n = nil
}

// SetQPState sets the state of the stub's QP (QPStateRTS, QPStateErr,
// ...): outside RTS it refuses posts with EINVAL.
func (s *StubNIC) SetQPState(state int) { C.rpma_stubnic_set_state(s.n, C.int(state)) }

// StubCounts are what a StubNIC has seen.
type StubCounts struct {
	Posted     uint64 // work requests accepted
	Unsignaled uint64 // of which unsignaled (they make no completion)
	Completed  uint64 // completions made
	Polled     uint64 // completions polled
	Refused    uint64 // posts refused
	Armed      uint64 // ibv_req_notify_cq calls
	Recvs      uint64 // receives accepted
}

// Counts returns the stub's counts.
func (s *StubNIC) Counts() StubCounts {
	n := s.n
	return StubCounts{
		Posted:     uint64(n.posted),
		Unsignaled: uint64(n.unsignaled),
		Completed:  uint64(n.head),
		Polled:     uint64(n.tail),
		Refused:    uint64(n.refused),
		Armed:      uint64(n.armed),
		Recvs:      uint64(n.recvs),
	}
}

// CLoopKind is a loop of librpma's calls that StubNIC.CLoop runs in C.
type CLoopKind int

// The C loops (rpma_stubnic.h). Transfers are 64 bytes.
const (
	CLoopWritePoll   CLoopKind = C.RPMA_CL_WRITE_POLL   // rpma_write (signaled) + rpma_cq_get_wc
	CLoopReadPoll    CLoopKind = C.RPMA_CL_READ_POLL    // rpma_read (signaled) + rpma_cq_get_wc
	CLoopPhased      CLoopKind = C.RPMA_CL_PHASED       // batches of rpma_write, then of rpma_cq_get_wc, each timed
	CLoopRaw         CLoopKind = C.RPMA_CL_RAW          // bare ibv_post_send + ibv_poll_cq
	CLoopNotify      CLoopKind = C.RPMA_CL_NOTIFY       // ibv_req_notify_cq
	CLoopWriteFlush  CLoopKind = C.RPMA_CL_WRITE_FLUSH  // rpma_write (unsignaled) + emulated rpma_flush + rpma_cq_get_wc
	CLoopFlush       CLoopKind = C.RPMA_CL_FLUSH        // emulated rpma_flush (an 8-byte read) + rpma_cq_get_wc
	CLoopAtomicWrite CLoopKind = C.RPMA_CL_ATOMIC_WRITE // emulated rpma_atomic_write (inline fenced write) + rpma_cq_get_wc
	CLoopSend        CLoopKind = C.RPMA_CL_SEND         // rpma_send (signaled) + rpma_cq_get_wc
)

// CLoopResult is what a C loop measured: nanoseconds and, when counted,
// user-space instructions, in total and (CLoopPhased) for its posts and
// its polls. Err is librpma's error code of the first failure, 0 if none.
type CLoopResult struct {
	NS, PostNS, PollNS          int64
	Insns, PostInsns, PollInsns int64
	Err                         int
}

// CLoop runs iters operations of kind on the stub in one C call, timed in
// C; batch is CLoopPhased's batch (at most the CQ's depth). perfFD is a
// perf_event counter of this thread's user-space instructions that the
// loop reads (read(2)) around itself and its phases, or -1.
func (s *StubNIC) CLoop(kind CLoopKind, iters int64, batch int, perfFD int) CLoopResult {
	r := C.rpma_stubnic_cloop(s.n, C.int(kind), C.int64_t(iters), C.int(batch), C.int(perfFD))
	return CLoopResult{
		NS: int64(r.ns), PostNS: int64(r.post_ns), PollNS: int64(r.poll_ns),
		Insns: int64(r.insns), PostInsns: int64(r.post_insns), PollInsns: int64(r.poll_insns),
		Err: int(r.err),
	}
}
