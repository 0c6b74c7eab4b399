package rpma

// ConnEvent mirrors enum rpma_conn_event: a connection event as returned by
// rpma_conn_next_event.
type ConnEvent int

const (
	// ConnUndefined mirrors RPMA_CONN_UNDEFINED: no event.
	ConnUndefined ConnEvent = -1
	// ConnEstablished mirrors RPMA_CONN_ESTABLISHED (rdma_cm ESTABLISHED).
	ConnEstablished ConnEvent = 0
	// ConnClosed mirrors RPMA_CONN_CLOSED (rdma_cm DISCONNECTED or
	// TIMEWAIT_EXIT).
	ConnClosed ConnEvent = 1
	// ConnLost mirrors RPMA_CONN_LOST (rdma_cm CONNECT_ERROR or
	// DEVICE_REMOVAL).
	ConnLost ConnEvent = 2
	// ConnRejected mirrors RPMA_CONN_REJECTED (rdma_cm REJECTED).
	ConnRejected ConnEvent = 3
	// ConnUnreachable mirrors RPMA_CONN_UNREACHABLE (rdma_cm UNREACHABLE).
	ConnUnreachable ConnEvent = 4
)

// String returns the same text as rpma_utils_conn_event_2str, including
// "Unsupported connection event" for values librpma does not define.
func (e ConnEvent) String() string {
	switch e {
	case ConnUndefined:
		return "Undefined connection event"
	case ConnEstablished:
		return "Connection established"
	case ConnClosed:
		return "Connection closed"
	case ConnLost:
		return "Connection lost"
	case ConnRejected:
		return "Connection rejected"
	case ConnUnreachable:
		return "Connection unreachable"
	default:
		return "Unsupported connection event"
	}
}
