package ibv

// Extended device capability bits (device_cap_flags_ex). Linux 6.1's
// <rdma/ib_user_verbs.h> lacks the flush and atomic-write bits, so they are
// defined here with the kernel's values (IB_UVERBS_DEVICE_*).
const (
	DeviceFlushGlobal     uint64 = 1 << 38 // IB_UVERBS_DEVICE_FLUSH_GLOBAL
	DeviceFlushPersistent uint64 = 1 << 39 // IB_UVERBS_DEVICE_FLUSH_PERSISTENT
	DeviceAtomicWrite     uint64 = 1 << 40 // IB_UVERBS_DEVICE_ATOMIC_WRITE
)

// Device capability bits (enum ibv_device_cap_flags, in device_cap_flags).
const (
	DeviceMemWindow       uint64 = 1 << 17 // IBV_DEVICE_MEM_WINDOW
	DeviceMemWindowType2B uint64 = 1 << 24 // IBV_DEVICE_MEM_WINDOW_TYPE_2B
)

// On-demand paging capability bits (struct ibv_odp_caps).
const (
	ODPSupport      uint64 = 1 << 0 // IBV_ODP_SUPPORT
	ODPSupportWrite uint32 = 1 << 1 // IBV_ODP_SUPPORT_WRITE
	ODPSupportRead  uint32 = 1 << 2 // IBV_ODP_SUPPORT_READ
)

// DeviceAttr is the part of struct ibv_device_attr_ex the library uses.
type DeviceAttr struct {
	Name            string
	FWVer           string
	NodeGUID        uint64
	VendorID        uint32
	VendorPartID    uint32
	PhysPortCnt     int
	MaxMRSize       uint64
	MaxQP           int
	MaxQPWR         int
	MaxSGE          int
	MaxCQ           int
	MaxCQE          int
	MaxMR           int
	MaxSRQ          int
	MaxSRQWR        int
	MaxQPRdAtom     int
	MaxQPInitRdAtom int
	AtomicCap       int    // orig_attr.atomic_cap (AtomicNone, AtomicHCA, AtomicGlob)
	DeviceCapFlags  uint64 // orig_attr.device_cap_flags
	CapFlagsEx      uint64 // device_cap_flags_ex
	ODPGeneralCaps  uint64 // odp_caps.general_caps
	ODPRCCaps       uint32 // odp_caps.per_transport_caps.rc_odp_caps
}

// NativeAtomicWrite reports IB_UVERBS_DEVICE_ATOMIC_WRITE, as librpma's
// rpma_utils_ibv_context_is_atomic_write_capable.
func (a *DeviceAttr) NativeAtomicWrite() bool { return a.CapFlagsEx&DeviceAtomicWrite != 0 }

// NativeFlush reports both flush capabilities (global and persistent), as
// librpma's rpma_utils_ibv_context_is_flush_capable.
func (a *DeviceAttr) NativeFlush() bool {
	const both = DeviceFlushGlobal | DeviceFlushPersistent
	return a.CapFlagsEx&both == both
}

// ODP reports on-demand paging for RC reads and writes, as librpma's
// rpma_utils_ibv_context_is_odp_capable.
func (a *DeviceAttr) ODP() bool {
	const rw = ODPSupportWrite | ODPSupportRead
	return a.ODPGeneralCaps&ODPSupport != 0 && a.ODPRCCaps&rw == rw
}

// PortState mirrors enum ibv_port_state.
type PortState int

// Port states.
const (
	PortNop         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

func (s PortState) String() string {
	switch s {
	case PortNop:
		return "NOP"
	case PortDown:
		return "DOWN"
	case PortInit:
		return "INIT"
	case PortArmed:
		return "ARMED"
	case PortActive:
		return "ACTIVE"
	case PortActiveDefer:
		return "ACTIVE_DEFER"
	}
	return "UNKNOWN"
}

// PortAttr is the part of struct ibv_port_attr the library uses.
type PortAttr struct {
	State     PortState
	ActiveMTU int // bytes
	LinkLayer int // IBV_LINK_LAYER_*
}
