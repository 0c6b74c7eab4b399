//go:build linux && cgo && !rpma_fake

package ibv

/*
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "rpma_ibv.h"
#include "rpma_inject.h"

// rpma_alloc_mw2 allocates a memory window of type 2 (ibv_alloc_mw) and
// reports errno.
static struct ibv_mw *rpma_alloc_mw2(struct ibv_pd *pd, uint32_t *rkey, int *err_no) {
	int e = RPMA_INJECT(ALLOC_MW);
	if (e) {
		*err_no = e;
		return NULL;
	}
	errno = 0;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	*err_no = mw ? 0 : (errno ? errno : EIO);
	if (mw)
		*rkey = mw->rkey;
	return mw;
}

// rpma_post_bind_mw posts the bind of a type 2 window to [addr,
// addr+length) of mr with the window's new key rkey (ibv_post_send of
// IBV_WR_BIND_MW), then reaps.
static int64_t rpma_post_bind_mw(uintptr_t qph, uint64_t wr_id, uint32_t flags,
		uintptr_t mwh, uint32_t rkey, uintptr_t mrh, uint64_t addr, uint64_t length, uint32_t access,
		uintptr_t cq, uintptr_t out, int room) {
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = flags;
	wr.bind_mw.mw = (struct ibv_mw *)mwh;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = (struct ibv_mr *)mrh;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = length;
	wr.bind_mw.bind_info.mw_access_flags = access;
	int ret = RPMA_INJECT(POST_SEND_BIND_MW);
	if (!ret)
		ret = ibv_post_send((struct ibv_qp *)qph, &wr, &bad);
	return rpma_post_result(ret, rpma_reap(cq, out, room), ret == 0);
}

// rpma_dealloc_mw holds the fault-injection site of ibv_dealloc_mw; an
// injected failure leaves the window allocated.
static int rpma_dealloc_mw(struct ibv_mw *mw) {
	int e = RPMA_INJECT(DEALLOC_MW);
	return e ? e : ibv_dealloc_mw(mw);
}
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// MW is a memory window of type 2 (struct ibv_mw): a key to a range of a
// registration, bound on one QP by a work request (PostBindMW) and valid
// only for requests arriving on that QP.
type MW struct {
	c *C.struct_ibv_mw
	// RKey is the key the window was allocated with; each bind gives it
	// a new one (IncRKey).
	RKey uint32
}

// AllocMW2 allocates a type 2 memory window (ibv_alloc_mw with
// IBV_MW_TYPE_2).
func (pd *PD) AllocMW2() (*MW, error) {
	var rkey C.uint32_t
	var errno C.int
	mw := C.rpma_alloc_mw2(pd.c, &rkey, &errno)
	if mw == nil {
		return nil, callError("ibv_alloc_mw", syscall.Errno(errno))
	}
	objInc(ObjMW)
	return &MW{c: mw, RKey: uint32(rkey)}, nil
}

// Dealloc deallocates the window (ibv_dealloc_mw), which also invalidates
// it if bound. It is a no-op on a nil or deallocated window.
func (w *MW) Dealloc() error {
	if w == nil || w.c == nil {
		return nil
	}
	if rc := C.rpma_dealloc_mw(w.c); rc != 0 {
		return callError("ibv_dealloc_mw", syscall.Errno(rc))
	}
	w.c = nil
	objDec(ObjMW)
	return nil
}

// PostBindMW posts the bind of w, with the new key rkey, to [addr,
// addr+length) of m with the window's IBV_ACCESS_* flags access
// (IBV_WR_BIND_MW), then reaps.
func (q *QP) PostBindMW(wrID uint64, flags uint32, w *MW, rkey uint32, m *MR, addr, length uint64, access int, r Reap) (syscall.Errno, int) {
	errno, reaped, _ := unpack(C.rpma_post_bind_mw(q.h, C.uint64_t(wrID), C.uint32_t(flags),
		C.uintptr_t(uintptr(unsafe.Pointer(w.c))), C.uint32_t(rkey), C.uintptr_t(uintptr(unsafe.Pointer(m.c))),
		C.uint64_t(addr), C.uint64_t(length), C.uint32_t(access),
		C.uintptr_t(r.cq), C.uintptr_t(r.out), C.int(r.room)))
	return errno, reaped
}
