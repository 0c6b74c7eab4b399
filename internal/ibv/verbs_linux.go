//go:build linux && cgo && !rpma_fake

package ibv

/*
#cgo LDFLAGS: -libverbs
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <infiniband/verbs.h>
#include "rpma_ibv.h"
#include "rpma_inject.h"

// rpma_alloc_pd clears errno first so that a failure without errno can be
// told apart (librpma maps it to RPMA_E_UNKNOWN).
static struct ibv_pd *rpma_alloc_pd(struct ibv_context *ctx, int *err_no) {
	int e = RPMA_INJECT(ALLOC_PD);
	if (e) {
		*err_no = e;
		return NULL;
	}
	errno = 0;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	*err_no = pd ? 0 : errno;
	return pd;
}

static int rpma_comp_channel_fd(struct ibv_comp_channel *ch) { return ch->fd; }
static int rpma_cq_cqe(struct ibv_cq *cq) { return cq->cqe; }

enum { rpma_wc_off_wr_id = offsetof(struct rpma_wc, wr_id),
	rpma_wc_off_imm = offsetof(struct rpma_wc, imm_data),
	rpma_wc_off_flags = offsetof(struct rpma_wc, wc_flags) };

static void *rpma_calloc_wc(int n) {
	int e = RPMA_INJECT(CALLOC_WC);
	if (e) {
		errno = e;
		return NULL;
	}
	return calloc((size_t)n, sizeof(struct rpma_wc));
}

// rpma_get_cq_event is one crossing for ibv_get_cq_event, the
// ibv_ack_cq_events of ack events of its CQ (this one included; 0
// acknowledges none: the caller acknowledges in batches) and, when rearm
// is set, the ibv_req_notify_cq that re-arms the CQ. It takes the channel
// as an integer and returns its result by value, so that cgo has no
// pointer to check: rc 0 with cq set; else the errno, with failed naming
// the call: 1 ibv_get_cq_event (EAGAIN on a non-blocking channel with no
// event), 2 ibv_req_notify_cq (the event was read and acknowledged as
// asked; cq is set).
struct rpma_cq_event { uintptr_t cq; int rc; int failed; };

static struct rpma_cq_event rpma_get_cq_event(uintptr_t chh, int rearm, unsigned int ack) {
	struct rpma_cq_event r = { 0, 0, 1 };
	struct ibv_cq *cq = NULL;
	void *ctx;
	r.rc = RPMA_INJECT(GET_CQ_EVENT);
	if (r.rc)
		return r;
	if (ibv_get_cq_event((struct ibv_comp_channel *)chh, &cq, &ctx)) {
		r.rc = errno ? errno : EIO;
		return r;
	}
	r.cq = (uintptr_t)cq;
	if (ack)
		ibv_ack_cq_events(cq, ack);
	r.failed = 2;
	r.rc = rearm ? RPMA_INJECT(REQ_NOTIFY_CQ_REARM) : 0;
	if (!r.rc && rearm)
		r.rc = ibv_req_notify_cq(cq, 0);
	if (!r.rc)
		r.failed = 0;
	return r;
}

// rpma_wait_cq_event blocks in epoll_wait on epfd (an instance watching
// the channel, a cancellation fd and others) and, when the channel is
// ready and read is set, reads its event as rpma_get_cq_event does: one
// crossing for a whole blocked wait (core's WaitThread mode). ready says
// which fds were ready (1: the channel, 2: cancel_fd, 4: another); the
// event is not read when cancel_fd is ready. epoll_wait's failure is
// ev.failed 3 (EINTR is retried). It is not a fault-injection site of its
// own: the event's read and re-arm are.
struct rpma_cq_wait { struct rpma_cq_event ev; int ready; };

static struct rpma_cq_wait rpma_wait_cq_event(uintptr_t chh, int epfd, int cancel_fd, int read, int rearm, unsigned int ack) {
	struct rpma_cq_wait r = { { 0, 0, 0 }, 0 };
	struct epoll_event evs[4];
	int n;
	do
		n = epoll_wait(epfd, evs, 4, -1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r.ev.rc = errno;
		r.ev.failed = 3;
		return r;
	}
	int chfd = ((struct ibv_comp_channel *)chh)->fd;
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;
		r.ready |= fd == chfd ? 1 : fd == cancel_fd ? 2 : 4;
	}
	if (read && (r.ready & 1) && !(r.ready & 2))
		r.ev = rpma_get_cq_event(chh, rearm, ack);
	else
		r.ev.failed = 1, r.ev.rc = EAGAIN; // no event read
	return r;
}

// The wrappers below hold the fault-injection sites of the calls the Go
// code makes (rpma_inject.h); each keeps its call's way of failing. An
// injected failure of a destroy leaves the object alive: the next call
// destroys it.
static int rpma_dealloc_pd(struct ibv_pd *pd) {
	int e = RPMA_INJECT(DEALLOC_PD);
	return e ? e : ibv_dealloc_pd(pd);
}

static struct ibv_comp_channel *rpma_create_comp_channel(struct ibv_context *ctx) {
	int e = RPMA_INJECT(CREATE_COMP_CHANNEL);
	if (e) {
		errno = e;
		return NULL;
	}
	return ibv_create_comp_channel(ctx);
}

static int rpma_destroy_comp_channel(struct ibv_comp_channel *ch) {
	int e = RPMA_INJECT(DESTROY_COMP_CHANNEL);
	return e ? e : ibv_destroy_comp_channel(ch);
}

static struct ibv_cq *rpma_create_cq(struct ibv_context *ctx, int cqe,
		struct ibv_comp_channel *ch, int comp_vector) {
	int e = RPMA_INJECT(CREATE_CQ);
	if (e) {
		errno = e;
		return NULL;
	}
	return ibv_create_cq(ctx, cqe, NULL, ch, comp_vector);
}

static int rpma_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	int e = RPMA_INJECT(REQ_NOTIFY_CQ);
	return e ? e : ibv_req_notify_cq(cq, solicited_only);
}

// rpma_arm_poll_cq arms cq for its next completion (ibv_req_notify_cq,
// through rpma_req_notify_cq and its fault-injection site) and then
// polls up to n of its completions into out, in one crossing: a wait
// about to park on a CQ it left disarmed (core's lazy arming). Arming
// first makes the park safe: a completion the poll does not find raises
// an event. rc is the arm's errno (nothing polled then); got is the
// poll's count, negative when it failed.
struct rpma_arm_poll { int got; int rc; };

static struct rpma_arm_poll rpma_arm_poll_cq(uintptr_t cqh, uintptr_t outh, int n) {
	struct rpma_arm_poll r = { 0, 0 };
	r.rc = rpma_req_notify_cq((struct ibv_cq *)cqh, 0);
	if (!r.rc)
		r.got = rpma_poll_cq(cqh, outh, n);
	return r;
}

// rpma_ack_cq_events acknowledges n events of cq (ibv_ack_cq_events,
// which cannot fail).
static void rpma_ack_cq_events(uintptr_t cqh, unsigned int n) {
	ibv_ack_cq_events((struct ibv_cq *)cqh, n);
}

static int rpma_destroy_cq(struct ibv_cq *cq) {
	int e = RPMA_INJECT(DESTROY_CQ);
	return e ? e : ibv_destroy_cq(cq);
}
*/
import "C"

import (
	"os"
	"syscall"
	"unsafe"
)

// Compile-time checks of the WC layout shared with C.
var (
	_ [0]struct{} = [unsafe.Sizeof(WC{}) - C.sizeof_struct_rpma_wc]struct{}{}
	_ [0]struct{} = [C.sizeof_struct_rpma_wc - unsafe.Sizeof(WC{})]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.WRID) - C.rpma_wc_off_wr_id]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.ImmData) - C.rpma_wc_off_imm]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(WC{}.WCFlags) - C.rpma_wc_off_flags]struct{}{}
	_ [0]struct{} = [C.IBV_WC_WITH_IMM - WCWithImm]struct{}{}
)

// Same reports whether c and o are the same device context.
func (c *Context) Same(o *Context) bool {
	return c != nil && o != nil && c.c != nil && c.c == o.c
}

// PD is a protection domain (struct ibv_pd).
type PD struct {
	c *C.struct_ibv_pd
}

// AllocPD allocates a protection domain (ibv_alloc_pd). When it fails
// without setting errno, the error carries errno 0 (not EIO).
func (c *Context) AllocPD() (*PD, error) {
	var errno C.int
	pd := C.rpma_alloc_pd(c.c, &errno)
	if pd == nil {
		return nil, &os.SyscallError{Syscall: "ibv_alloc_pd", Err: syscall.Errno(errno)}
	}
	objInc(ObjPD)
	return &PD{c: pd}, nil
}

// Context returns the device the PD belongs to.
func (pd *PD) Context() *Context { return &Context{c: pd.c.context} }

// Dealloc deallocates the PD (ibv_dealloc_pd). It is a no-op on a nil or
// deallocated PD.
func (pd *PD) Dealloc() error {
	if pd == nil || pd.c == nil {
		return nil
	}
	if rc := C.rpma_dealloc_pd(pd.c); rc != 0 {
		return callError("ibv_dealloc_pd", syscall.Errno(rc))
	}
	pd.c = nil
	objDec(ObjPD)
	return nil
}

// CompChannel is a completion channel (struct ibv_comp_channel).
type CompChannel struct {
	c *C.struct_ibv_comp_channel
}

// CreateCompChannel creates a completion channel
// (ibv_create_comp_channel). Its fd is blocking; the caller decides.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	ch, errno := C.rpma_create_comp_channel(c.c)
	if ch == nil {
		return nil, callError("ibv_create_comp_channel", errnoOf(errno))
	}
	objInc(ObjCompChannel)
	return &CompChannel{c: ch}, nil
}

// FD returns the channel's fd, or -1 for a nil or destroyed channel.
func (ch *CompChannel) FD() int {
	if ch == nil || ch.c == nil {
		return -1
	}
	return int(C.rpma_comp_channel_fd(ch.c))
}

// GetCQEvent reads the next completion event (ibv_get_cq_event),
// acknowledges ack events of its CQ, this one included
// (ibv_ack_cq_events; 0: none, the caller acknowledges them later with
// CQ.AckEvents, and must before CQ.Destroy), and, when rearm is set,
// re-arms its CQ (ibv_req_notify_cq), in one crossing, and returns which
// CQ it belongs to. On a non-blocking channel with no event it returns an
// error matching syscall.EAGAIN. A failed re-arm returns the CQ and an
// error naming ibv_req_notify_cq.
func (ch *CompChannel) GetCQEvent(rearm bool, ack int) (CQRef, error) {
	r := C.rpma_get_cq_event(C.uintptr_t(uintptr(unsafe.Pointer(ch.c))), C.int(b2i(rearm)), C.uint(ack))
	if r.rc != 0 {
		if r.rc == C.EAGAIN && r.failed == 1 {
			return CQRef{}, errCQEventAgain
		}
		call := "ibv_get_cq_event"
		if r.failed == 2 {
			call = "ibv_req_notify_cq"
		}
		return CQRef{h: uintptr(r.cq)}, callError(call, syscall.Errno(r.rc))
	}
	return CQRef{h: uintptr(r.cq)}, nil
}

// GetCQEventRearm is GetCQEvent(true, 1): the event read, acknowledged
// and its CQ re-armed.
func (ch *CompChannel) GetCQEventRearm() (CQRef, error) { return ch.GetCQEvent(true, 1) }

// WaitCQEvent blocks in epoll_wait on epfd, an epoll instance that
// watches the channel, cancelFD and other fds, until one is ready, and
// when the channel is (and cancelFD is not) reads its event as
// GetCQEvent(rearm, ack) does, in the same crossing, if read is set. It
// reports which fds were ready and whether an event was read (got), with
// the read's error as GetCQEvent's; err alone is epoll_wait's failure.
// The caller keeps epfd and cancelFD open meanwhile.
func (ch *CompChannel) WaitCQEvent(epfd, cancelFD int, read, rearm bool, ack int) (ready WaitReady, ref CQRef, got bool, err error) {
	r := C.rpma_wait_cq_event(C.uintptr_t(uintptr(unsafe.Pointer(ch.c))), C.int(epfd), C.int(cancelFD),
		C.int(b2i(read)), C.int(b2i(rearm)), C.uint(ack))
	ready, ref = WaitReady(r.ready), CQRef{h: uintptr(r.ev.cq)}
	switch {
	case r.ev.failed == 3:
		return ready, CQRef{}, false, callError("epoll_wait", syscall.Errno(r.ev.rc))
	case r.ev.rc == 0:
		return ready, ref, true, nil
	case r.ev.failed == 1 && r.ev.rc == C.EAGAIN:
		return ready, CQRef{}, false, nil
	case r.ev.failed == 2:
		return ready, ref, true, callError("ibv_req_notify_cq", syscall.Errno(r.ev.rc))
	}
	return ready, ref, true, callError("ibv_get_cq_event", syscall.Errno(r.ev.rc))
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CQRef names a CQ that a completion event came from; compare it with
// CQ.Is. It is a value (the CQ's address as an integer): reading an event
// allocates nothing.
type CQRef struct{ h uintptr }

// Is reports whether r names q.
func (q *CQ) Is(r CQRef) bool {
	return q != nil && q.c != nil && uintptr(unsafe.Pointer(q.c)) == r.h
}

// Destroy destroys the channel (ibv_destroy_comp_channel). It is a no-op on
// a nil or destroyed channel.
func (ch *CompChannel) Destroy() error {
	if ch == nil || ch.c == nil {
		return nil
	}
	if rc := C.rpma_destroy_comp_channel(ch.c); rc != 0 {
		return callError("ibv_destroy_comp_channel", syscall.Errno(rc))
	}
	ch.c = nil
	objDec(ObjCompChannel)
	return nil
}

// CQ is a completion queue (struct ibv_cq).
type CQ struct {
	c *C.struct_ibv_cq
	h C.uintptr_t // c as an integer, for the polls
}

// CreateCQ creates a completion queue with at least cqe entries
// (ibv_create_cq), reporting to ch (nil: no channel).
func (c *Context) CreateCQ(cqe int, ch *CompChannel, compVector int) (*CQ, error) {
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.c
	}
	cq, errno := C.rpma_create_cq(c.c, C.int(cqe), cch, C.int(compVector))
	if cq == nil {
		return nil, callError("ibv_create_cq", errnoOf(errno))
	}
	objInc(ObjCQ)
	return &CQ{c: cq, h: C.uintptr_t(uintptr(unsafe.Pointer(cq)))}, nil
}

// Same reports whether q and o wrap the same C CQ.
func (q *CQ) Same(o *CQ) bool { return q != nil && o != nil && q.c != nil && q.c == o.c }

// CQE returns the number of entries the CQ actually has (cq->cqe).
func (q *CQ) CQE() int { return int(C.rpma_cq_cqe(q.c)) }

// ReqNotify arms the CQ (ibv_req_notify_cq).
func (q *CQ) ReqNotify(solicitedOnly bool) error {
	s := C.int(0)
	if solicitedOnly {
		s = 1
	}
	if rc := C.rpma_req_notify_cq(q.c, s); rc != 0 {
		return callError("ibv_req_notify_cq", syscall.Errno(rc))
	}
	return nil
}

// ArmPoll arms the CQ for its next completion (ibv_req_notify_cq) and
// then polls up to n completions into b from its element from on, in one
// crossing, returning how many it got: a completion the poll does not
// find raises an event. A failed arm polls nothing and returns an error
// naming ibv_req_notify_cq; a failed poll, one naming ibv_poll_cq (the CQ
// is armed then).
func (q *CQ) ArmPoll(b *WCBuf, from, n int) (int, error) {
	r := C.rpma_arm_poll_cq(q.h, C.uintptr_t(b.addr(from)), C.int(n))
	switch {
	case r.rc != 0:
		return 0, callError("ibv_req_notify_cq", syscall.Errno(r.rc))
	case r.got < 0:
		return 0, callError("ibv_poll_cq", 0)
	}
	return int(r.got), nil
}

// AckEvents acknowledges n completion events of the CQ read without
// acknowledgement (ibv_ack_cq_events); n <= 0 does nothing.
func (q *CQ) AckEvents(n int) {
	if n > 0 {
		C.rpma_ack_cq_events(q.h, C.uint(n))
	}
}

// Poll polls up to n completions into b from its element from on, in one
// crossing (ibv_poll_cq), and returns how many it got. ibv_poll_cq
// reports failure without errno; the error then carries EIO.
func (q *CQ) Poll(b *WCBuf, from, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	got := C.rpma_poll_cq(q.h, C.uintptr_t(b.addr(from)), C.int(n))
	if got < 0 {
		return 0, callError("ibv_poll_cq", 0)
	}
	return int(got), nil
}

// ReapInto says that a post reaps up to room completions of q into b,
// from its element from on; room 0 reaps nothing.
func (q *CQ) ReapInto(b *WCBuf, from, room int) Reap {
	// room 0 needs no zero Reap: C's rpma_reap polls nothing then. One
	// branch less keeps the callers' reap inlinable.
	return Reap{cq: uintptr(q.h), out: b.addr(from), room: room}
}

// NewWCBuf allocates n work completions in C memory (calloc).
func NewWCBuf(n int) (*WCBuf, error) {
	p := C.rpma_calloc_wc(C.int(n))
	if p == nil {
		return nil, callError("calloc", syscall.ENOMEM)
	}
	objInc(ObjWCBuf)
	return &WCBuf{p: p, wcs: unsafe.Slice((*WC)(p), n)}, nil
}

// Free frees the buffer; it is a no-op on nil and on a second call.
func (b *WCBuf) Free() {
	if b == nil || b.p == nil {
		return
	}
	C.free(b.p)
	b.p, b.wcs = nil, nil
	objDec(ObjWCBuf)
}

// Destroy destroys the CQ (ibv_destroy_cq). It is a no-op on a nil or
// destroyed CQ.
func (q *CQ) Destroy() error {
	if q == nil || q.c == nil {
		return nil
	}
	if rc := C.rpma_destroy_cq(q.c); rc != 0 {
		return callError("ibv_destroy_cq", syscall.Errno(rc))
	}
	q.c = nil
	objDec(ObjCQ)
	return nil
}
