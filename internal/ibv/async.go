package ibv

import "strconv"

// AsyncEventType is an asynchronous event's type (enum ibv_event_type).
type AsyncEventType int

// The asynchronous events (values of enum ibv_event_type, checked against
// the header in async_linux.go).
const (
	EventCQErr              AsyncEventType = 0
	EventQPFatal            AsyncEventType = 1
	EventQPReqErr           AsyncEventType = 2
	EventQPAccessErr        AsyncEventType = 3
	EventCommEst            AsyncEventType = 4
	EventSQDrained          AsyncEventType = 5
	EventPathMig            AsyncEventType = 6
	EventPathMigErr         AsyncEventType = 7
	EventDeviceFatal        AsyncEventType = 8
	EventPortActive         AsyncEventType = 9
	EventPortErr            AsyncEventType = 10
	EventLIDChange          AsyncEventType = 11
	EventPKeyChange         AsyncEventType = 12
	EventSMChange           AsyncEventType = 13
	EventSRQErr             AsyncEventType = 14
	EventSRQLimitReached    AsyncEventType = 15
	EventQPLastWQEReached   AsyncEventType = 16
	EventClientReregister   AsyncEventType = 17
	EventGIDChange          AsyncEventType = 18
	EventWQFatal            AsyncEventType = 19
	asyncEventTypeNameCount                = 20
)

var asyncEventNames = [asyncEventTypeNameCount]string{
	"IBV_EVENT_CQ_ERR", "IBV_EVENT_QP_FATAL", "IBV_EVENT_QP_REQ_ERR", "IBV_EVENT_QP_ACCESS_ERR",
	"IBV_EVENT_COMM_EST", "IBV_EVENT_SQ_DRAINED", "IBV_EVENT_PATH_MIG", "IBV_EVENT_PATH_MIG_ERR",
	"IBV_EVENT_DEVICE_FATAL", "IBV_EVENT_PORT_ACTIVE", "IBV_EVENT_PORT_ERR", "IBV_EVENT_LID_CHANGE",
	"IBV_EVENT_PKEY_CHANGE", "IBV_EVENT_SM_CHANGE", "IBV_EVENT_SRQ_ERR", "IBV_EVENT_SRQ_LIMIT_REACHED",
	"IBV_EVENT_QP_LAST_WQE_REACHED", "IBV_EVENT_CLIENT_REREGISTER", "IBV_EVENT_GID_CHANGE", "IBV_EVENT_WQ_FATAL",
}

// String returns the event's C name, for example "IBV_EVENT_QP_FATAL".
func (t AsyncEventType) String() string {
	if t >= 0 && int(t) < len(asyncEventNames) {
		return asyncEventNames[t]
	}
	return "IBV_EVENT_" + strconv.Itoa(int(t))
}

// AsyncEvent is an asynchronous event of a device (struct
// ibv_async_event), already acknowledged. Which object it is about is
// given by Object, a key to compare with QP.Key, CQ.Key and SRQ.Key (0
// for events about the port or the device); Port is the port of port
// events.
type AsyncEvent struct {
	Type   AsyncEventType
	Object uintptr
	Port   int
}
