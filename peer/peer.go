package peer

import (
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/rpma"
)

// Device is an RDMA device, found through an IP address as
// rpma_utils_get_ibv_context finds it. Its verbs context belongs to
// librdmacm, which keeps it open for the life of the process: Close only
// retires the handle.
//
// A Device is safe for concurrent use by multiple goroutines.
type Device core.Device

// DeviceForAddress mirrors rpma_utils_get_ibv_context: it returns the RDMA
// device that addr binds to ([rpma.IbvContextLocal]: rdma_getaddrinfo with
// RAI_PASSIVE, then rdma_bind_addr) or resolves through
// ([rpma.IbvContextRemote]: rdma_resolve_addr, waiting at most 1000 ms in
// librdmacm). addr is an IP address or host name.
//
// Errors: an empty addr, an unknown typ, or an address that is not on an
// RDMA device (for example a wildcard address) match
// [rpma.ErrInvalidArgument]; a failing rdma_cm call matches
// [rpma.ErrProvider] and its errno.
func DeviceForAddress(addr string, typ rpma.UtilIbvContextType) (*Device, error) {
	d, err := core.DeviceForAddress(addr, typ)
	return (*Device)(d), err
}

func (d *Device) core() *core.Device { return (*core.Device)(d) }

// Name returns the device's name, for example "rxe0".
func (d *Device) Name() string { return d.core().Name() }

// ODPCapable mirrors rpma_utils_ibv_context_is_odp_capable: it queries the
// device (ibv_query_device_ex) and reports whether it supports on-demand
// paging for RC reads and writes.
func (d *Device) ODPCapable() (bool, error) { return d.core().ODPCapable() }

// Close retires the handle. While peers created on the device are open it
// refuses with an error matching [rpma.ErrProvider] and EBUSY, and the
// device stays usable. Close is idempotent and nil-safe.
func (d *Device) Close() error { return d.core().Close() }

// Peer mirrors struct rpma_peer: one protection domain on a device, the
// parent of endpoints, connection requests, connections, memory regions
// and SRQs. At creation it probes once what the
// device does natively and logs (at [rpma.LogInfo]) what falls back:
// atomic write emulated by an ordinary RDMA write, flush emulated by an
// RDMA read, no on-demand paging.
//
// A Peer is safe for concurrent use by multiple goroutines.
type Peer core.Peer

// New mirrors rpma_peer_new: it probes dev (ibv_query_device_ex) and
// allocates a protection domain (ibv_alloc_pd).
//
// Errors: a nil or closed dev matches [rpma.ErrInvalidArgument]; a failing
// query matches [rpma.ErrProvider]; ibv_alloc_pd failing with ENOMEM
// matches [rpma.ErrNoMem], with another errno [rpma.ErrProvider], without
// errno [rpma.ErrUnknown].
func New(dev *Device) (*Peer, error) {
	p, err := core.NewPeer(dev.core())
	return (*Peer)(p), err
}

func (p *Peer) core() *core.Peer { return (*core.Peer)(p) }

// NativeAtomicWrite reports whether the device does atomic writes natively
// (IB_UVERBS_DEVICE_ATOMIC_WRITE); otherwise they are emulated with an
// inline, fenced 8-byte RDMA write.
func (p *Peer) NativeAtomicWrite() bool { return p.core().NativeAtomicWrite() }

// NativeFlush reports whether flushes are native (the device has both flush
// capabilities and this build has ibv_wr_flush, rdma-core 45+); otherwise
// they are emulated with an 8-byte RDMA read.
func (p *Peer) NativeFlush() bool { return p.core().NativeFlush() }

// ODP reports whether the device supports on-demand paging for RC reads and
// writes.
func (p *Peer) ODP() bool { return p.core().ODP() }

// Device returns the device p was created on.
func (p *Peer) Device() *Device { return (*Device)(p.core().Device()) }

// Close mirrors rpma_peer_delete (ibv_dealloc_pd). While objects created
// from the peer are open (endpoints, connection requests, connections,
// memory regions, SRQs) it
// refuses with an error matching [rpma.ErrProvider] and EBUSY that names
// how many there are, and the peer stays usable: close them first. When
// ibv_dealloc_pd fails, the peer keeps its PD, refuses every use, and
// Close may be called again. Close is idempotent and nil-safe.
func (p *Peer) Close() error { return p.core().Close() }
