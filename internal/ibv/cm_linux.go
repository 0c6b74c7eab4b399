//go:build linux && cgo && !rpma_fake

package ibv

/*
#cgo LDFLAGS: -lrdmacm -libverbs
#cgo noescape rpma_cm_get_event
#cgo nocallback rpma_cm_get_event
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include "rpma_inject.h"

// rpma_cm_ev is a copy of a struct rdma_cm_event.
struct rpma_cm_ev {
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	int event;
	int status;
	int ack_errno;
	uint8_t pdata_len;
	uint8_t pdata[256];
};

// rpma_cm_get_event is one crossing for rdma_get_cm_event, the copy of the
// event and rdma_ack_cm_event. It returns the errno of rdma_get_cm_event (0
// on success); a failed ack is reported in out->ack_errno. An injected
// failure of the ack (site ACK_CM_EVENT) still acknowledges the event: an
// event left unacknowledged would make rdma_destroy_id wait forever, which
// no real rdma_ack_cm_event failure does.
static int rpma_cm_get_event(struct rdma_event_channel *ch, struct rpma_cm_ev *out) {
	struct rdma_cm_event *ev = NULL;
	int e = RPMA_INJECT(GET_CM_EVENT);
	if (e)
		return e;
	if (rdma_get_cm_event(ch, &ev))
		return errno ? errno : EIO;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	out->event = ev->event;
	out->status = ev->status;
	out->pdata_len = 0;
	out->ack_errno = 0;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_REJECTED:
		if (ev->param.conn.private_data != NULL && ev->param.conn.private_data_len > 0) {
			out->pdata_len = ev->param.conn.private_data_len;
			memcpy(out->pdata, ev->param.conn.private_data, out->pdata_len);
		}
		break;
	default:
		break;
	}
	int ae = RPMA_INJECT(ACK_CM_EVENT);
	if (rdma_ack_cm_event(ev))
		out->ack_errno = errno ? errno : EIO;
	if (ae)
		out->ack_errno = ae;
	return 0;
}

// rpma_cm_getaddrinfo wraps rdma_getaddrinfo with librpma's hints (RC,
// RDMA_PS_TCP). It returns 0, or the getaddrinfo code with *err_no set to
// errno when the code means "see errno".
static int rpma_cm_getaddrinfo(const char *node, const char *service, int passive,
		struct rdma_addrinfo **res, int *err_no) {
	struct rdma_addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	if (passive)
		hints.ai_flags |= RAI_PASSIVE;
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;
	int e = RPMA_INJECT(GETADDRINFO);
	if (e) {
		*res = NULL;
		*err_no = e;
		return -1;
	}
	errno = 0;
	int ret = rdma_getaddrinfo(node, service, &hints, res);
	*err_no = errno;
	return ret;
}

static int rpma_cm_resolve_addr(struct rdma_cm_id *id, struct rdma_addrinfo *ai, int ms) {
	int e = RPMA_INJECT(RESOLVE_ADDR);
	if (e)
		return e;
	if (rdma_resolve_addr(id, ai->ai_src_addr, ai->ai_dst_addr, ms))
		return errno ? errno : EIO;
	return 0;
}

static int rpma_cm_bind_addr(struct rdma_cm_id *id, struct rdma_addrinfo *ai) {
	int e = RPMA_INJECT(BIND_ADDR);
	if (e)
		return e;
	if (rdma_bind_addr(id, ai->ai_src_addr))
		return errno ? errno : EIO;
	return 0;
}

// rpma_cm_conn is one crossing for rdma_connect or rdma_accept with the
// parameters librpma sets.
static int rpma_cm_conn(struct rdma_cm_id *id, int accept, const void *pdata, uint8_t pdata_len,
		uint8_t resp_res, uint8_t init_depth, uint8_t flow_control,
		uint8_t retry, uint8_t rnr_retry) {
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.private_data = pdata_len ? pdata : NULL;
	p.private_data_len = pdata_len;
	p.responder_resources = resp_res;
	p.initiator_depth = init_depth;
	p.flow_control = flow_control;
	p.retry_count = retry;
	p.rnr_retry_count = rnr_retry;
	int ret;
	if (accept) {
		int e = RPMA_INJECT(ACCEPT);
		if (e)
			return e;
		ret = rdma_accept(id, &p);
	} else {
		int e = RPMA_INJECT(CONNECT);
		if (e)
			return e;
		ret = rdma_connect(id, &p);
	}
	if (ret)
		return errno ? errno : EIO;
	return 0;
}

struct rpma_sockaddr {
	int family;
	uint8_t addr[16];
	uint16_t port;
	uint32_t scope;
};

static void rpma_cm_decode_addr(const struct sockaddr *sa, struct rpma_sockaddr *out) {
	memset(out, 0, sizeof(*out));
	if (sa == NULL)
		return;
	out->family = sa->sa_family;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		memcpy(out->addr, &in->sin_addr, 4);
		out->port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		memcpy(out->addr, &in6->sin6_addr, 16);
		out->port = ntohs(in6->sin6_port);
		out->scope = in6->sin6_scope_id;
	}
}

static void rpma_cm_local_addr(struct rdma_cm_id *id, struct rpma_sockaddr *out) {
	rpma_cm_decode_addr(rdma_get_local_addr(id), out);
}

static void rpma_cm_peer_addr(struct rdma_cm_id *id, struct rpma_sockaddr *out) {
	rpma_cm_decode_addr(rdma_get_peer_addr(id), out);
}

static int rpma_cm_create_qp(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr) {
	int e = RPMA_INJECT(CREATE_QP);
	if (e)
		return e;
	if (rdma_create_qp_ex(id, attr))
		return errno ? errno : EIO;
	return 0;
}

static uint32_t rpma_cm_qp_num(struct rdma_cm_id *id) {
	return id->qp ? id->qp->qp_num : 0;
}

static struct ibv_context *rpma_cm_verbs(struct rdma_cm_id *id) { return id->verbs; }
static int rpma_cm_has_qp(struct rdma_cm_id *id) { return id->qp != NULL; }
static int rpma_cm_channel_fd(struct rdma_event_channel *ch) { return ch->fd; }

// The wrappers below hold the fault-injection sites of the calls the Go
// code makes (rpma_inject.h); each keeps its call's way of failing (NULL
// or -1, with errno).
static struct rdma_event_channel *rpma_cm_create_event_channel(void) {
	int e = RPMA_INJECT(CREATE_EVENT_CHANNEL);
	if (e) {
		errno = e;
		return NULL;
	}
	return rdma_create_event_channel();
}

static int rpma_cm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id) {
	int e = RPMA_INJECT(CREATE_ID);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_create_id(ch, id, NULL, RDMA_PS_TCP);
}

static int rpma_cm_resolve_route(struct rdma_cm_id *id, int ms) {
	int e = RPMA_INJECT(RESOLVE_ROUTE);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_resolve_route(id, ms);
}

static int rpma_cm_listen(struct rdma_cm_id *id, int backlog) {
	int e = RPMA_INJECT(LISTEN);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_listen(id, backlog);
}

static int rpma_cm_reject(struct rdma_cm_id *id, const void *pdata, uint8_t len) {
	int e = RPMA_INJECT(REJECT);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_reject(id, pdata, len);
}

static int rpma_cm_set_ack_timeout(struct rdma_cm_id *id, uint8_t *v) {
	int e = RPMA_INJECT(SET_OPTION);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, v, sizeof(*v));
}

static int rpma_cm_disconnect(struct rdma_cm_id *id) {
	int e = RPMA_INJECT(DISCONNECT);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_disconnect(id);
}

static int rpma_cm_notify_established(struct rdma_cm_id *id) {
	int e = RPMA_INJECT(NOTIFY);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_notify(id, IBV_EVENT_COMM_EST);
}

static int rpma_cm_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch) {
	int e = RPMA_INJECT(MIGRATE_ID);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_migrate_id(id, ch);
}

// An injected failure of rdma_destroy_id leaves the id alive: the next
// Destroy destroys it.
static int rpma_cm_destroy_id(struct rdma_cm_id *id) {
	int e = RPMA_INJECT(DESTROY_ID);
	if (e) {
		errno = e;
		return -1;
	}
	return rdma_destroy_id(id);
}
*/
import "C"

import (
	"net/netip"
	"sync"
	"syscall"
	"unsafe"
)

// Compile-time checks that the Go constants match the C headers.
var (
	_ [0]struct{} = [C.RDMA_CM_EVENT_ADDR_RESOLVED - EventAddrResolved]struct{}{}
	_ [0]struct{} = [C.RDMA_CM_EVENT_CONNECT_REQUEST - EventConnectRequest]struct{}{}
	_ [0]struct{} = [C.RDMA_CM_EVENT_REJECTED - EventRejected]struct{}{}
	_ [0]struct{} = [C.RDMA_CM_EVENT_ESTABLISHED - EventEstablished]struct{}{}
	_ [0]struct{} = [C.RDMA_CM_EVENT_TIMEWAIT_EXIT - EventTimewaitExit]struct{}{}
	_ [0]struct{} = [C.RDMA_MAX_RESP_RES - MaxRespRes]struct{}{}
	_ [0]struct{} = [C.RDMA_MAX_INIT_DEPTH - MaxInitDepth]struct{}{}
	_ [0]struct{} = [C.IBV_QP_EX_WITH_ATOMIC_WRITE - QPExWithAtomicWrite]struct{}{}
)

// EventChannel is an rdma_cm event channel (struct rdma_event_channel).
type EventChannel struct {
	c *C.struct_rdma_event_channel
	// ev is where GetEvent's crossing copies the event: C memory, so that
	// a read allocates nothing (a Go struct with pointer fields passed to
	// C escapes to the heap despite #cgo noescape: one allocation per
	// read, seen on every blocking CQ.Wait, which reads the connection's
	// events too). mu serializes its use.
	mu sync.Mutex
	ev *C.struct_rpma_cm_ev
}

// CreateEventChannel creates an event channel (rdma_create_event_channel).
// Its fd is blocking; the caller decides.
func CreateEventChannel() (*EventChannel, error) {
	c, errno := C.rpma_cm_create_event_channel()
	if c == nil {
		return nil, callError("rdma_create_event_channel", errnoOf(errno))
	}
	ev := (*C.struct_rpma_cm_ev)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_rpma_cm_ev{}))))
	if ev == nil {
		C.rdma_destroy_event_channel(c)
		return nil, callError("rdma_create_event_channel", syscall.ENOMEM)
	}
	objInc(ObjEventChannel)
	return &EventChannel{c: c, ev: ev}, nil
}

// FD returns the channel's file descriptor, or -1 for a nil or destroyed
// channel.
func (ch *EventChannel) FD() int {
	if ch == nil || ch.c == nil {
		return -1
	}
	return int(C.rpma_cm_channel_fd(ch.c))
}

// GetEvent reads the next event (rdma_get_cm_event), copies it and
// acknowledges it (rdma_ack_cm_event), in one crossing. On a non-blocking
// channel with no event it returns an error matching syscall.EAGAIN.
func (ch *EventChannel) GetEvent() (CMEvent, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ev := ch.ev
	if rc := C.rpma_cm_get_event(ch.c, ev); rc != 0 {
		if rc == C.EAGAIN {
			return CMEvent{}, errCMEventAgain
		}
		return CMEvent{}, callError("rdma_get_cm_event", syscall.Errno(rc))
	}
	if ev.event == C.RDMA_CM_EVENT_CONNECT_REQUEST {
		objInc(ObjCMID) // librdmacm created the request's id
	}
	out := CMEvent{
		Type:   CMEventType(ev.event),
		Status: int(ev.status),
		ID:     wrapID(ev.id),
	}
	if ev.listen_id != nil {
		out.ListenID = wrapID(ev.listen_id)
	}
	if ev.pdata_len > 0 {
		out.PrivateData = C.GoBytes(unsafe.Pointer(&ev.pdata[0]), C.int(ev.pdata_len))
	}
	if ev.ack_errno != 0 {
		return out, callError("rdma_ack_cm_event", syscall.Errno(ev.ack_errno))
	}
	return out, nil
}

// Destroy destroys the channel (rdma_destroy_event_channel). It is a no-op
// on a nil or destroyed channel.
func (ch *EventChannel) Destroy() {
	if ch == nil || ch.c == nil {
		return
	}
	C.rdma_destroy_event_channel(ch.c)
	ch.c = nil
	ch.mu.Lock()
	C.free(unsafe.Pointer(ch.ev))
	ch.ev = nil
	ch.mu.Unlock()
	objDec(ObjEventChannel)
}

// CMID is an rdma_cm identifier (struct rdma_cm_id).
type CMID struct {
	c *C.struct_rdma_cm_id
}

func wrapID(c *C.struct_rdma_cm_id) *CMID {
	if c == nil {
		return nil
	}
	return &CMID{c: c}
}

// CreateID creates a CM id in the RDMA_PS_TCP port space whose events go to
// ch (rdma_create_id). A nil ch makes the id synchronous: librdmacm then
// waits for resolution events inside the resolving calls.
func CreateID(ch *EventChannel) (*CMID, error) {
	var cch *C.struct_rdma_event_channel
	if ch != nil {
		cch = ch.c
	}
	var id *C.struct_rdma_cm_id
	if rc, errno := C.rpma_cm_create_id(cch, &id); rc != 0 {
		return nil, callError("rdma_create_id", errnoOf(errno))
	}
	objInc(ObjCMID)
	return &CMID{c: id}, nil
}

// Same reports whether id and o wrap the same C id.
func (id *CMID) Same(o *CMID) bool {
	return id != nil && o != nil && id.c == o.c
}

// Verbs returns the device the id is bound to (id->verbs), borrowed from
// librdmacm, or nil when the id is not bound to a device (for example a
// wildcard listener).
func (id *CMID) Verbs() *Context {
	v := C.rpma_cm_verbs(id.c)
	if v == nil {
		return nil
	}
	return &Context{c: v}
}

// BindAddr binds the id to ai's source address (rdma_bind_addr).
func (id *CMID) BindAddr(ai *AddrInfo) error {
	if rc := C.rpma_cm_bind_addr(id.c, ai.c); rc != 0 {
		return callError("rdma_bind_addr", syscall.Errno(rc))
	}
	return nil
}

// ResolveAddr starts resolving ai's destination (and source) address
// (rdma_resolve_addr). On an asynchronous id the result arrives as an
// ADDR_RESOLVED or ADDR_ERROR event.
func (id *CMID) ResolveAddr(ai *AddrInfo, timeoutMs int) error {
	if rc := C.rpma_cm_resolve_addr(id.c, ai.c, C.int(timeoutMs)); rc != 0 {
		return callError("rdma_resolve_addr", syscall.Errno(rc))
	}
	return nil
}

// ResolveRoute starts resolving the route (rdma_resolve_route). On an
// asynchronous id the result arrives as a ROUTE_RESOLVED or ROUTE_ERROR
// event.
func (id *CMID) ResolveRoute(timeoutMs int) error {
	if rc, errno := C.rpma_cm_resolve_route(id.c, C.int(timeoutMs)); rc != 0 {
		return callError("rdma_resolve_route", errnoOf(errno))
	}
	return nil
}

// Listen starts listening (rdma_listen).
func (id *CMID) Listen(backlog int) error {
	if rc, errno := C.rpma_cm_listen(id.c, C.int(backlog)); rc != 0 {
		return callError("rdma_listen", errnoOf(errno))
	}
	return nil
}

func (id *CMID) conn(accept bool, p *ConnParam) error {
	var pd unsafe.Pointer
	if len(p.PrivateData) > 0 {
		pd = unsafe.Pointer(unsafe.SliceData(p.PrivateData))
	}
	acc, call := C.int(0), "rdma_connect"
	if accept {
		acc, call = 1, "rdma_accept"
	}
	rc := C.rpma_cm_conn(id.c, acc, pd, C.uint8_t(len(p.PrivateData)),
		C.uint8_t(p.ResponderResources), C.uint8_t(p.InitiatorDepth), C.uint8_t(p.FlowControl),
		C.uint8_t(p.RetryCount), C.uint8_t(p.RNRRetryCount))
	if rc != 0 {
		return callError(call, syscall.Errno(rc))
	}
	return nil
}

// Connect starts connecting (rdma_connect). len(p.PrivateData) must not
// exceed MaxPrivateData.
func (id *CMID) Connect(p *ConnParam) error { return id.conn(false, p) }

// Accept accepts a connection request (rdma_accept). len(p.PrivateData)
// must not exceed MaxPrivateData.
func (id *CMID) Accept(p *ConnParam) error { return id.conn(true, p) }

// Reject rejects a connection request (rdma_reject).
func (id *CMID) Reject(pdata []byte) error {
	var pd unsafe.Pointer
	if len(pdata) > 0 {
		pd = unsafe.Pointer(unsafe.SliceData(pdata))
	}
	if rc, errno := C.rpma_cm_reject(id.c, pd, C.uint8_t(len(pdata))); rc != 0 {
		return callError("rdma_reject", errnoOf(errno))
	}
	return nil
}

// SetAckTimeout sets the local ACK timeout of the id's QP to 4.096 µs ×
// 2^exp (rdma_set_option with RDMA_OPTION_ID_ACK_TIMEOUT); rdma_cm applies
// it when it moves the QP to RTS, so it must come before Connect or
// Accept.
func (id *CMID) SetAckTimeout(exp uint8) error {
	v := C.uint8_t(exp)
	if rc, errno := C.rpma_cm_set_ack_timeout(id.c, &v); rc != 0 {
		return callError("rdma_set_option", errnoOf(errno))
	}
	return nil
}

// Disconnect disconnects (rdma_disconnect).
func (id *CMID) Disconnect() error {
	if rc, errno := C.rpma_cm_disconnect(id.c); rc != 0 {
		return callError("rdma_disconnect", errnoOf(errno))
	}
	return nil
}

// NotifyEstablished tells rdma_cm that the id's QP got its first packet
// (rdma_notify with IBV_EVENT_COMM_EST), as an IBV_EVENT_COMM_EST
// asynchronous event asks: the connection is established.
func (id *CMID) NotifyEstablished() error {
	if rc, errno := C.rpma_cm_notify_established(id.c); rc != 0 {
		return callError("rdma_notify", errnoOf(errno))
	}
	return nil
}

// Migrate moves the id, and its pending events, to ch (rdma_migrate_id).
// It blocks while the id has unacknowledged events on its old channel.
func (id *CMID) Migrate(ch *EventChannel) error {
	if rc, errno := C.rpma_cm_migrate_id(id.c, ch.c); rc != 0 {
		return callError("rdma_migrate_id", errnoOf(errno))
	}
	return nil
}

// CreateQP creates the id's RC queue pair (rdma_create_qp_ex) and returns
// the capabilities it got.
func (id *CMID) CreateQP(a *QPInitAttr) (QPCap, error) {
	var attr C.struct_ibv_qp_init_attr_ex
	attr.qp_type = C.IBV_QPT_RC
	attr.comp_mask = C.IBV_QP_INIT_ATTR_PD
	attr.pd = a.PD.c
	if a.SendCQ != nil {
		attr.send_cq = a.SendCQ.c
	}
	if a.RecvCQ != nil {
		attr.recv_cq = a.RecvCQ.c
	}
	if a.SRQ != nil {
		attr.srq = a.SRQ.c
	}
	attr.cap.max_send_wr = C.uint32_t(a.MaxSendWR)
	attr.cap.max_recv_wr = C.uint32_t(a.MaxRecvWR)
	attr.cap.max_send_sge = C.uint32_t(a.MaxSendSGE)
	attr.cap.max_recv_sge = C.uint32_t(a.MaxRecvSGE)
	attr.cap.max_inline_data = C.uint32_t(a.MaxInlineData)
	if a.SQSigAll {
		attr.sq_sig_all = 1
	}
	if a.SendOpsFlags != 0 {
		attr.comp_mask |= C.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
		attr.send_ops_flags = C.uint64_t(a.SendOpsFlags)
		if a.SendOpsFlags&QPExWithFlush != 0 {
			// QP.PostWriteFlush chains ibv_wr_rdma_write with
			// ibv_wr_flush: the provider sets only the ibv_wr_*
			// of the operations asked for, and calling an unset one
			// is a jump to address 0.
			attr.send_ops_flags |= C.IBV_QP_EX_WITH_RDMA_WRITE
		}
	}
	if rc := C.rpma_cm_create_qp(id.c, &attr); rc != 0 {
		return QPCap{}, callError("rdma_create_qp_ex", syscall.Errno(rc))
	}
	objInc(ObjQP)
	return QPCap{
		MaxSendWR:     uint32(attr.cap.max_send_wr),
		MaxRecvWR:     uint32(attr.cap.max_recv_wr),
		MaxSendSGE:    uint32(attr.cap.max_send_sge),
		MaxRecvSGE:    uint32(attr.cap.max_recv_sge),
		MaxInlineData: uint32(attr.cap.max_inline_data),
	}, nil
}

// HasQP reports whether the id has a queue pair.
func (id *CMID) HasQP() bool { return C.rpma_cm_has_qp(id.c) != 0 }

// QPNum returns the number of the id's queue pair, 0 if it has none.
func (id *CMID) QPNum() uint32 { return uint32(C.rpma_cm_qp_num(id.c)) }

// DestroyQP destroys the id's queue pair (rdma_destroy_qp), if any.
func (id *CMID) DestroyQP() {
	if C.rpma_cm_has_qp(id.c) != 0 {
		C.rdma_destroy_qp(id.c)
		objDec(ObjQP)
	}
}

// Destroy destroys the id (rdma_destroy_id). It blocks while the id has
// unacknowledged events. It is a no-op on a destroyed id.
func (id *CMID) Destroy() error {
	if id == nil || id.c == nil {
		return nil
	}
	if rc, errno := C.rpma_cm_destroy_id(id.c); rc != 0 {
		return callError("rdma_destroy_id", errnoOf(errno))
	}
	id.c = nil
	objDec(ObjCMID)
	return nil
}

func decodeAddr(sa *C.struct_rpma_sockaddr) SockAddr {
	port := uint16(sa.port)
	switch sa.family {
	case C.AF_INET:
		var b [4]byte
		copy(b[:], C.GoBytes(unsafe.Pointer(&sa.addr[0]), 4))
		return netip.AddrPortFrom(netip.AddrFrom4(b), port)
	case C.AF_INET6:
		var b [16]byte
		copy(b[:], C.GoBytes(unsafe.Pointer(&sa.addr[0]), 16))
		a := netip.AddrFrom16(b)
		if sa.scope != 0 {
			a = a.WithZone(itoa(uint32(sa.scope)))
		}
		return netip.AddrPortFrom(a, port)
	}
	return SockAddr{}
}

// LocalAddr returns the id's bound local address and port
// (rdma_get_local_addr), or the zero value if it has none.
func (id *CMID) LocalAddr() SockAddr {
	var sa C.struct_rpma_sockaddr
	C.rpma_cm_local_addr(id.c, &sa)
	return decodeAddr(&sa)
}

// PeerAddr returns the id's peer address and port (rdma_get_peer_addr),
// or the zero value if it has none.
func (id *CMID) PeerAddr() SockAddr {
	var sa C.struct_rpma_sockaddr
	C.rpma_cm_peer_addr(id.c, &sa)
	return decodeAddr(&sa)
}

// AddrInfo is the result of rdma_getaddrinfo (struct rdma_addrinfo). Only
// its first entry is used, as librpma does.
type AddrInfo struct {
	c *C.struct_rdma_addrinfo
}

// GetAddrInfo translates node and service (rdma_getaddrinfo) with the
// hints librpma uses: RC, RDMA_PS_TCP and, if passive, RAI_PASSIVE. An
// empty service is passed as NULL. Failures that getaddrinfo reports
// without errno are *AddrInfoError values.
func GetAddrInfo(node, service string, passive bool) (*AddrInfo, error) {
	cnode := C.CString(node)
	defer C.free(unsafe.Pointer(cnode))
	var csvc *C.char
	if service != "" {
		csvc = C.CString(service)
		defer C.free(unsafe.Pointer(csvc))
	}
	p := C.int(0)
	if passive {
		p = 1
	}
	var res *C.struct_rdma_addrinfo
	var errno C.int
	ret := C.rpma_cm_getaddrinfo(cnode, csvc, p, &res, &errno)
	if ret != 0 {
		if ret == -1 || ret == C.EAI_SYSTEM {
			return nil, callError("rdma_getaddrinfo", syscall.Errno(errno))
		}
		return nil, &AddrInfoError{Code: int(ret), Msg: C.GoString(C.gai_strerror(ret))}
	}
	if res == nil {
		return nil, callError("rdma_getaddrinfo", syscall.ENOENT)
	}
	objInc(ObjAddrInfo)
	return &AddrInfo{c: res}, nil
}

// Free releases the result (rdma_freeaddrinfo). It is a no-op on nil or
// freed results.
func (ai *AddrInfo) Free() {
	if ai == nil || ai.c == nil {
		return
	}
	C.rdma_freeaddrinfo(ai.c)
	ai.c = nil
	objDec(ObjAddrInfo)
}

func itoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
