package ibv

import (
	"net/netip"
	"strconv"
)

// CMEventType mirrors enum rdma_cm_event_type. The values are checked
// against <rdma/rdma_cma.h> at compile time in the cgo build.
type CMEventType int

// rdma_cm event types.
const (
	EventAddrResolved   CMEventType = 0  // RDMA_CM_EVENT_ADDR_RESOLVED
	EventAddrError      CMEventType = 1  // RDMA_CM_EVENT_ADDR_ERROR
	EventRouteResolved  CMEventType = 2  // RDMA_CM_EVENT_ROUTE_RESOLVED
	EventRouteError     CMEventType = 3  // RDMA_CM_EVENT_ROUTE_ERROR
	EventConnectRequest CMEventType = 4  // RDMA_CM_EVENT_CONNECT_REQUEST
	EventConnectResp    CMEventType = 5  // RDMA_CM_EVENT_CONNECT_RESPONSE
	EventConnectError   CMEventType = 6  // RDMA_CM_EVENT_CONNECT_ERROR
	EventUnreachable    CMEventType = 7  // RDMA_CM_EVENT_UNREACHABLE
	EventRejected       CMEventType = 8  // RDMA_CM_EVENT_REJECTED
	EventEstablished    CMEventType = 9  // RDMA_CM_EVENT_ESTABLISHED
	EventDisconnected   CMEventType = 10 // RDMA_CM_EVENT_DISCONNECTED
	EventDeviceRemoval  CMEventType = 11 // RDMA_CM_EVENT_DEVICE_REMOVAL
	EventMulticastJoin  CMEventType = 12 // RDMA_CM_EVENT_MULTICAST_JOIN
	EventMulticastError CMEventType = 13 // RDMA_CM_EVENT_MULTICAST_ERROR
	EventAddrChange     CMEventType = 14 // RDMA_CM_EVENT_ADDR_CHANGE
	EventTimewaitExit   CMEventType = 15 // RDMA_CM_EVENT_TIMEWAIT_EXIT
)

var cmEventNames = [...]string{
	EventAddrResolved:   "RDMA_CM_EVENT_ADDR_RESOLVED",
	EventAddrError:      "RDMA_CM_EVENT_ADDR_ERROR",
	EventRouteResolved:  "RDMA_CM_EVENT_ROUTE_RESOLVED",
	EventRouteError:     "RDMA_CM_EVENT_ROUTE_ERROR",
	EventConnectRequest: "RDMA_CM_EVENT_CONNECT_REQUEST",
	EventConnectResp:    "RDMA_CM_EVENT_CONNECT_RESPONSE",
	EventConnectError:   "RDMA_CM_EVENT_CONNECT_ERROR",
	EventUnreachable:    "RDMA_CM_EVENT_UNREACHABLE",
	EventRejected:       "RDMA_CM_EVENT_REJECTED",
	EventEstablished:    "RDMA_CM_EVENT_ESTABLISHED",
	EventDisconnected:   "RDMA_CM_EVENT_DISCONNECTED",
	EventDeviceRemoval:  "RDMA_CM_EVENT_DEVICE_REMOVAL",
	EventMulticastJoin:  "RDMA_CM_EVENT_MULTICAST_JOIN",
	EventMulticastError: "RDMA_CM_EVENT_MULTICAST_ERROR",
	EventAddrChange:     "RDMA_CM_EVENT_ADDR_CHANGE",
	EventTimewaitExit:   "RDMA_CM_EVENT_TIMEWAIT_EXIT",
}

// String returns the C name of t, as rdma_event_str does, or
// "CMEventType(n)" for values the header does not define.
func (t CMEventType) String() string {
	if t >= 0 && int(t) < len(cmEventNames) {
		return cmEventNames[t]
	}
	return "CMEventType(" + strconv.Itoa(int(t)) + ")"
}

// MaxPrivateData is the largest private data an rdma_cm event can carry
// (private_data_len is a uint8).
const MaxPrivateData = 255

// CMEvent is a copy of a struct rdma_cm_event. The C event has already been
// acknowledged (rdma_ack_cm_event) when a CMEvent is returned, so nothing in
// it refers to C memory except the two ids.
type CMEvent struct {
	Type CMEventType
	// Status is the event's status: a negative errno for ADDR_ERROR,
	// ROUTE_ERROR, CONNECT_ERROR and UNREACHABLE, the reject reason
	// (positive) for REJECTED, 0 otherwise.
	Status int
	// ID is the CM id the event belongs to. For CONNECT_REQUEST it is a
	// new id, created by librdmacm for the incoming connection.
	ID *CMID
	// ListenID is the listening id of a CONNECT_REQUEST, else nil.
	ListenID *CMID
	// PrivateData is a copy of param.conn.private_data for
	// CONNECT_REQUEST, CONNECT_RESPONSE, ESTABLISHED and REJECTED
	// events, nil when there is none.
	PrivateData []byte
}

// ConnParam is the part of struct rdma_conn_param the library sets. The
// private data is passed to C for the duration of the call only.
type ConnParam struct {
	PrivateData        []byte
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8 // ignored when accepting
	RNRRetryCount      uint8
}

// Maximum values of ConnParam.ResponderResources and InitiatorDepth, which
// rdma_cm clips to the device's limits (RDMA_MAX_RESP_RES,
// RDMA_MAX_INIT_DEPTH).
const (
	MaxRespRes   = 0xFF
	MaxInitDepth = 0xFF
)

// QPInitAttr is the part of struct ibv_qp_init_attr_ex that
// CMID.CreateQP passes to rdma_create_qp_ex. The QP type is always
// IBV_QPT_RC.
type QPInitAttr struct {
	PD            *PD
	SendCQ        *CQ
	RecvCQ        *CQ
	SRQ           *SRQ // nil: the QP has its own receive queue
	MaxSendWR     uint32
	MaxRecvWR     uint32
	MaxSendSGE    uint32
	MaxRecvSGE    uint32
	MaxInlineData uint32
	SQSigAll      bool
	// SendOpsFlags are IBV_QP_EX_WITH_* bits; when non-zero they are
	// passed with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
	SendOpsFlags uint64
}

// QPCap mirrors struct ibv_qp_cap: what the created QP actually got.
type QPCap struct {
	MaxSendWR     uint32
	MaxRecvWR     uint32
	MaxSendSGE    uint32
	MaxRecvSGE    uint32
	MaxInlineData uint32
}

// Send operation bits of QPInitAttr.SendOpsFlags (enum ibv_qp_create_send_ops_flags).
const (
	QPExWithAtomicWrite uint64 = 1 << 12 // IBV_QP_EX_WITH_ATOMIC_WRITE
	QPExWithFlush       uint64 = 1 << 11 // IBV_QP_EX_WITH_FLUSH (rdma-core 45+: the bit after TSO)
)

// SockAddr is a decoded struct sockaddr.
type SockAddr = netip.AddrPort

// WC mirrors the fields of struct ibv_wc that the library reports. Its
// layout is shared with the C helper that polls the CQ, so it must not be
// changed without changing that helper (checked at compile time).
type WC struct {
	WRID      uint64
	Status    uint32 // enum ibv_wc_status
	Opcode    uint32 // enum ibv_wc_opcode
	VendorErr uint32
	ByteLen   uint32
	ImmData   uint32 // as stored by verbs: network byte order
	QPNum     uint32
	SrcQP     uint32
	WCFlags   uint32 // IBV_WC_* flags
}

// Work completion flags (enum ibv_wc_flags).
const (
	WCWithImm uint32 = 1 << 1 // IBV_WC_WITH_IMM
)
