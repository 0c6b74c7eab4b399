//go:build linux && cgo && !rpma_fake

package ibv

/*
#cgo LDFLAGS: -libverbs
#cgo noescape rpma_get_async_event
#cgo nocallback rpma_get_async_event
#include <errno.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "rpma_inject.h"

struct rpma_async_ev {
	int type;
	uintptr_t object;
	int port;
};

// rpma_get_async_event is one crossing for ibv_get_async_event, the copy
// of the event and its ibv_ack_async_event: acknowledged at once, so that
// destroying its object (which waits for every event read for it to be
// acknowledged) can never hang. It returns the errno of
// ibv_get_async_event (EAGAIN on a non-blocking fd with no event).
static int rpma_get_async_event(struct ibv_context *ctx, struct rpma_async_ev *out) {
	struct ibv_async_event ev;
	int e = RPMA_INJECT(GET_ASYNC_EVENT);
	if (e)
		return e;
	if (ibv_get_async_event(ctx, &ev))
		return errno ? errno : EIO;
	out->type = ev.event_type;
	out->object = 0;
	out->port = 0;
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		out->object = (uintptr_t)ev.element.cq;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		out->object = (uintptr_t)ev.element.qp;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		out->object = (uintptr_t)ev.element.srq;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		out->port = ev.element.port_num;
		break;
	default:
		break;
	}
	ibv_ack_async_event(&ev);
	return 0;
}

static int rpma_async_fd(struct ibv_context *ctx) { return ctx->async_fd; }
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// Compile-time checks of the event types against the header.
var (
	_ [0]struct{} = [C.IBV_EVENT_CQ_ERR - EventCQErr]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_QP_FATAL - EventQPFatal]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_QP_ACCESS_ERR - EventQPAccessErr]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_COMM_EST - EventCommEst]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_DEVICE_FATAL - EventDeviceFatal]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_PORT_ACTIVE - EventPortActive]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_PORT_ERR - EventPortErr]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_SRQ_ERR - EventSRQErr]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_QP_LAST_WQE_REACHED - EventQPLastWQEReached]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_GID_CHANGE - EventGIDChange]struct{}{}
	_ [0]struct{} = [C.IBV_EVENT_WQ_FATAL - EventWQFatal]struct{}{}
)

// AsyncFD returns the device's asynchronous event fd (ctx->async_fd).
func (c *Context) AsyncFD() int { return int(C.rpma_async_fd(c.c)) }

// Key identifies the device context, for maps.
func (c *Context) Key() uintptr {
	if c == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(c.c))
}

// GetAsyncEvent reads the next asynchronous event and acknowledges it, in
// one crossing. On a non-blocking fd with no event it returns an error
// matching syscall.EAGAIN.
func (c *Context) GetAsyncEvent() (AsyncEvent, error) {
	var ev C.struct_rpma_async_ev
	if rc := C.rpma_get_async_event(c.c, &ev); rc != 0 {
		if rc == C.EAGAIN {
			return AsyncEvent{}, errAsyncEventAgain
		}
		return AsyncEvent{}, callError("ibv_get_async_event", syscall.Errno(rc))
	}
	return AsyncEvent{Type: AsyncEventType(ev._type), Object: uintptr(ev.object), Port: int(ev.port)}, nil
}

// Key identifies the QP in an AsyncEvent.Object.
func (q *QP) Key() uintptr {
	if q == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(q.c))
}

// Key identifies the CQ in an AsyncEvent.Object.
func (q *CQ) Key() uintptr {
	if q == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(q.c))
}

// Key identifies the SRQ in an AsyncEvent.Object.
func (s *SRQ) Key() uintptr {
	if s == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(s.c))
}
