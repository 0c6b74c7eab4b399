package rpma

// CompletionFlags mirrors the RPMA_F_COMPLETION_* flags of the data-path
// calls (rpma_read, rpma_write, rpma_flush, rpma_send, ...): whether the
// operation produces a work completion. It must not be zero.
type CompletionFlags int

const (
	// CompletionOnError mirrors RPMA_F_COMPLETION_ON_ERROR: the work
	// request is posted unsignaled, so a completion appears only if the
	// operation fails.
	CompletionOnError CompletionFlags = 1
	// CompletionAlways mirrors RPMA_F_COMPLETION_ALWAYS: the work request
	// is posted signaled (IBV_SEND_SIGNALED), so a completion always
	// appears. It includes the CompletionOnError bit.
	CompletionAlways CompletionFlags = 3
)

// String returns the C name of f, for example "RPMA_F_COMPLETION_ALWAYS", or
// "CompletionFlags(n)" for other values.
func (f CompletionFlags) String() string {
	switch f {
	case CompletionOnError:
		return "RPMA_F_COMPLETION_ON_ERROR"
	case CompletionAlways:
		return "RPMA_F_COMPLETION_ALWAYS"
	default:
		return codeSuffix("CompletionFlags", int64(f))
	}
}

// FlushType mirrors enum rpma_flush_type: what rpma_flush guarantees about
// the flushed range.
type FlushType int

const (
	// FlushPersistent mirrors RPMA_FLUSH_TYPE_PERSISTENT: the data reached
	// the persistence domain of the remote peer.
	FlushPersistent FlushType = 0
	// FlushVisibility mirrors RPMA_FLUSH_TYPE_VISIBILITY: the data is
	// globally visible on the remote peer.
	FlushVisibility FlushType = 1
)

// String returns the C name of t, for example "RPMA_FLUSH_TYPE_PERSISTENT", or
// "FlushType(n)" for other values.
func (t FlushType) String() string {
	switch t {
	case FlushPersistent:
		return "RPMA_FLUSH_TYPE_PERSISTENT"
	case FlushVisibility:
		return "RPMA_FLUSH_TYPE_VISIBILITY"
	default:
		return codeSuffix("FlushType", int64(t))
	}
}

// AtomicWriteAlignment mirrors RPMA_ATOMIC_WRITE_ALIGNMENT: the remote offset
// of rpma_atomic_write must be a multiple of it, and it writes exactly this
// many bytes.
const AtomicWriteAlignment = 8

// UtilIbvContextType mirrors enum rpma_util_ibv_context_type: how
// rpma_utils_get_ibv_context looks up the RDMA device for an address.
type UtilIbvContextType int

const (
	// IbvContextLocal mirrors RPMA_UTIL_IBV_CONTEXT_LOCAL: the address is
	// local; the device is the one it binds to.
	IbvContextLocal UtilIbvContextType = 0
	// IbvContextRemote mirrors RPMA_UTIL_IBV_CONTEXT_REMOTE: the address is
	// remote; the device is the one it resolves through.
	IbvContextRemote UtilIbvContextType = 1
)

// String returns the C name of t, for example "RPMA_UTIL_IBV_CONTEXT_LOCAL",
// or "UtilIbvContextType(n)" for other values.
func (t UtilIbvContextType) String() string {
	switch t {
	case IbvContextLocal:
		return "RPMA_UTIL_IBV_CONTEXT_LOCAL"
	case IbvContextRemote:
		return "RPMA_UTIL_IBV_CONTEXT_REMOTE"
	default:
		return codeSuffix("UtilIbvContextType", int64(t))
	}
}
