package ibv

// Memory access flags (enum ibv_access_flags). The flush bits exist only in
// rdma-core 45 and later; they are defined here with their values so that
// the mapping of usage to access can be written (and tested) everywhere.
const (
	AccessLocalWrite      = 1 << 0 // IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite     = 1 << 1 // IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead      = 1 << 2 // IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic    = 1 << 3 // IBV_ACCESS_REMOTE_ATOMIC
	AccessMWBind          = 1 << 4 // IBV_ACCESS_MW_BIND
	AccessOnDemand        = 1 << 6 // IBV_ACCESS_ON_DEMAND
	AccessFlushGlobal     = 1 << 8 // IBV_ACCESS_FLUSH_GLOBAL (rdma-core 45+)
	AccessFlushPersistent = 1 << 9 // IBV_ACCESS_FLUSH_PERSISTENT (rdma-core 45+)
)

// SendOp is the opcode of a work request posted by QP.PostSend (enum
// ibv_wr_opcode).
type SendOp uint32

// Send opcodes.
const (
	OpRDMAWrite        SendOp = 0 // IBV_WR_RDMA_WRITE
	OpRDMAWriteWithImm SendOp = 1 // IBV_WR_RDMA_WRITE_WITH_IMM
	OpSend             SendOp = 2 // IBV_WR_SEND
	OpSendWithImm      SendOp = 3 // IBV_WR_SEND_WITH_IMM
	OpRDMARead         SendOp = 4 // IBV_WR_RDMA_READ
	OpAtomicCmpAndSwp  SendOp = 5 // IBV_WR_ATOMIC_CMP_AND_SWP
	OpAtomicFetchAdd   SendOp = 6 // IBV_WR_ATOMIC_FETCH_AND_ADD
)

// Atomic capabilities of a device (enum ibv_atomic_cap).
const (
	AtomicNone = 0 // IBV_ATOMIC_NONE
	AtomicHCA  = 1 // IBV_ATOMIC_HCA: atomic against the device's other atomics
	AtomicGlob = 2 // IBV_ATOMIC_GLOB: atomic against the CPUs too
)

// Send flags (enum ibv_send_flags).
const (
	SendFence     uint32 = 1 << 0 // IBV_SEND_FENCE
	SendSignaled  uint32 = 1 << 1 // IBV_SEND_SIGNALED
	SendSolicited uint32 = 1 << 2 // IBV_SEND_SOLICITED
	SendInline    uint32 = 1 << 3 // IBV_SEND_INLINE
)

// Flush placement types (enum ibv_placement_type, rdma-core 45+).
const (
	FlushGlobal     uint8 = 1 << 0 // IBV_FLUSH_GLOBAL
	FlushPersistent uint8 = 1 << 1 // IBV_FLUSH_PERSISTENT
)

// QP states (enum ibv_qp_state) the library looks at.
const (
	QPStateRTS = 3 // IBV_QPS_RTS
	QPStateErr = 6 // IBV_QPS_ERR
)

// MR advice (enum ibv_advise_mr_advice) and flags.
const (
	AdvisePrefetch        = 0      // IBV_ADVISE_MR_ADVICE_PREFETCH
	AdvisePrefetchWrite   = 1      // IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE
	AdvisePrefetchNoFault = 2      // IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT
	AdviseFlagFlush       = 1 << 0 // IBV_ADVISE_MR_FLAG_FLUSH
)

// IncRKey is ibv_inc_rkey: the key with its low 8 bits (the part a
// consumer chooses when it binds a memory window) incremented.
func IncRKey(rkey uint32) uint32 { return rkey&0xffffff00 | (rkey+1)&0xff }

// MaxBatch is the most work requests QP.PostBatch posts as one chain.
const MaxBatch = 32

// BatchWR is one work request of QP.PostBatch: an RDMA write (Op
// OpRDMAWrite) or read (OpRDMARead) of Len bytes between LAddr (LKey) and
// RAddr (RKey). Its layout is C's struct rpma_batch_wr.
type BatchWR struct {
	WRID  uint64
	LAddr uint64
	RAddr uint64
	Op    SendOp
	Flags uint32
	Len   uint32
	LKey  uint32
	RKey  uint32
	_     uint32
}
