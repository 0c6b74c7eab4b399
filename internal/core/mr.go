package core

import (
	"encoding/binary"
	"errors"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/regmem"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Usage bits of a memory region (RPMA_MR_USAGE_*).
const (
	UsageReadSrc         = 1 << 0
	UsageReadDst         = 1 << 1
	UsageWriteSrc        = 1 << 2
	UsageWriteDst        = 1 << 3
	UsageFlushVisibility = 1 << 4
	UsageFlushPersistent = 1 << 5
	UsageSend            = 1 << 6
	UsageRecv            = 1 << 7
	// UsageAtomicDst is this module's own (librpma has no atomics): the
	// target of the other side's CompareAndSwap and FetchAndAdd
	// (IBV_ACCESS_REMOTE_ATOMIC). It does not fit the descriptor's usage
	// byte: ExtendedDescriptor carries it.
	UsageAtomicDst = 1 << 8
	// UsageGranted is this module's own too: the region's remote usages
	// are reachable only through grants (Conn.Grant, memory windows of
	// type 2B): it is registered with IBV_ACCESS_MW_BIND and without any
	// remote access of its own, so its own rkey opens nothing. It is a
	// property of the registration, never in a descriptor.
	UsageGranted  = 1 << 9
	usageLibrpma  = 0xff
	usageRemote   = usageLibrpma | UsageAtomicDst // what a descriptor can carry
	usageAll      = usageRemote | UsageGranted
	usageFlushAny = UsageFlushVisibility | UsageFlushPersistent
	// usageGrantable: the usages that give the other side access.
	usageGrantable = UsageReadSrc | UsageWriteDst | usageFlushAny | UsageAtomicDst
	// accessRemote: the IBV_ACCESS_* bits that open a region to the other
	// side.
	accessRemote   = ibv.AccessRemoteRead | ibv.AccessRemoteWrite | ibv.AccessRemoteAtomic | ibv.AccessFlushGlobal | ibv.AccessFlushPersistent
	DescriptorSize = 2*8 + 4 + 1 // RPMA_MR_DESC_SIZE
	// ExtendedDescriptorSize: the 21 bytes of librpma's descriptor and
	// one of this module's usage bits (usage >> 8).
	ExtendedDescriptorSize  = DescriptorSize + 1
	msgNoODPForRegistration = "the device has no On-Demand Paging, which this memory needs (FsDAX memory cannot be pinned: it needs ODP)"
	msgMemlock              = "registering %d bytes pins them, and pinned memory counts against the locked-memory limit " +
		"(RLIMIT_MEMLOCK, %d bytes for this process) unless the process has CAP_IPC_LOCK: raise the limit " +
		"(ulimit -l, LimitMEMLOCK= of a systemd unit, memlock in /etc/security/limits.conf) or grant CAP_IPC_LOCK"
	msgFlushPersistentMemory = "length=%d, access=0x%x: with native flush a persistent flush usage asks for " +
		"IBV_ACCESS_FLUSH_PERSISTENT, which the device may grant only on persistent memory (rxe does): " +
		"register persistent memory (pmem.Map of Device DAX) for mr.UsageFlushPersistent, or DRAM for mr.UsageFlushVisibility only"
)

// UsageToAccess is librpma's rpma_peer_usage2access: the IBV_ACCESS_*
// flags a registration with usage gets. nativeFlush is whether the
// registering peer flushes natively (then the flush usages ask for the
// flush access bits instead of remote read); iwarp whether its transport
// is iWARP (whose RDMA read writes into the reading side's memory).
func UsageToAccess(usage int, nativeFlush, iwarp bool) int {
	access := 0
	if usage&UsageReadSrc != 0 {
		access |= ibv.AccessRemoteRead
	}
	if nativeFlush {
		if usage&UsageFlushVisibility != 0 {
			access |= ibv.AccessFlushGlobal
		}
		if usage&UsageFlushPersistent != 0 {
			access |= ibv.AccessFlushPersistent
		}
	} else if usage&usageFlushAny != 0 {
		// The emulated flush is an RDMA read of the flushed region.
		access |= ibv.AccessRemoteRead
	}
	if usage&UsageReadDst != 0 {
		access |= ibv.AccessLocalWrite
		if iwarp {
			access |= ibv.AccessRemoteWrite
		}
	}
	if usage&UsageWriteSrc != 0 {
		access |= ibv.AccessLocalWrite
	}
	if usage&UsageWriteDst != 0 {
		// Remote write needs local write too.
		access |= ibv.AccessRemoteWrite | ibv.AccessLocalWrite
	}
	if usage&UsageRecv != 0 {
		access |= ibv.AccessLocalWrite
	}
	if usage&UsageAtomicDst != 0 {
		// A remote atomic writes the word, hence local write too.
		access |= ibv.AccessRemoteAtomic | ibv.AccessLocalWrite
	}
	// UsageSend needs no access flag.
	if usage&UsageGranted != 0 {
		// Remote access only through windows bound to the region.
		access = access&^accessRemote | ibv.AccessMWBind
	}
	return access
}

// RegionAccess is the access a region registered with usage gets:
// UsageToAccess, widened so that a flush usage serves flushers of both
// kinds, whichever this build is: remote read for an emulated flush
// (librpma 1.2, builds without native flush) and, where the device's
// capabilities (capsEx, device_cap_flags_ex) include native flush, the
// flush access bits for a native one (librpma 1.3, builds with it).
// librpma gives one or the other by its own build, so its targets serve
// only flushers of their own kind. A granted region keeps no remote bit
// (UsageToAccess).
func RegionAccess(usage int, nativeFlush bool, capsEx uint64, iwarp bool) int {
	access := UsageToAccess(usage, nativeFlush, iwarp)
	if usage&UsageGranted != 0 || usage&usageFlushAny == 0 {
		return access
	}
	access |= ibv.AccessRemoteRead
	if usage&UsageFlushVisibility != 0 && capsEx&ibv.DeviceFlushGlobal != 0 {
		access |= ibv.AccessFlushGlobal
	}
	if usage&UsageFlushPersistent != 0 && capsEx&ibv.DeviceFlushPersistent != 0 {
		access |= ibv.AccessFlushPersistent
	}
	return access
}

// MR mirrors struct rpma_mr_local: a registered memory region.
type MR struct {
	life
	pin    runtime.Pinner // the memory, when it is Go's
	peer   *Peer
	mr     *ibv.MR
	buf    []byte
	usage  int
	access int
	odp    bool
	addr   uint64
	size   uint64
	lkey   uint32
	rkey   uint32
	leak   *leak.Handle
	grants atomic.Int32 // live grants of the region (UsageGranted)
}

// RegMR mirrors rpma_mr_reg. b is the memory to register. Memory of the Go
// heap is pinned (runtime.Pinner) until Close, as cgo requires of memory C
// keeps using; mmapped memory needs no pin. Either way the region and its
// memory are recorded in internal/regmem until Close: that keeps them
// reachable (a region whose caller drops it without deregistering leaks,
// with its memory, for the life of the process, which is safe: Go's heap
// never reuses memory a peer can still write into), and lets
// pmem.Region.Close refuse to unmap registered memory.
func RegMR(p *Peer, b []byte, usage int) (*MR, error) {
	const op = "mr_reg"
	if len(b) == 0 {
		return nil, rpmaerr.Inval(op, "empty memory")
	}
	if usage == 0 || usage&^usageAll != 0 {
		return nil, rpmaerr.Inval(op, "usage 0x%x: must be non-zero and only RPMA_MR_USAGE_* bits, mr.UsageAtomicDst or mr.UsageGranted", usage)
	}
	if usage&^UsageGranted == 0 {
		return nil, rpmaerr.Inval(op, "usage 0x%x: mr.UsageGranted needs the usages it grants", usage)
	}
	if usage&UsageGranted != 0 && p != nil && p.attr.DeviceCapFlags&ibv.DeviceMemWindowType2B == 0 {
		return nil, rpmaerr.NoSupp(op, "mr.UsageGranted needs memory windows of type 2B, which the device lacks (device_cap_flags 0x%x has no IBV_DEVICE_MEM_WINDOW_TYPE_2B)", p.attr.DeviceCapFlags)
	}
	if err := p.acquire(op); err != nil {
		return nil, err
	}
	m, err := regMR(p, b, usage)
	if err != nil {
		p.release()
		return nil, err
	}
	regmem.Add(m, b)
	return m, nil
}

func regMR(p *Peer, b []byte, usage int) (*MR, error) {
	access := RegionAccess(usage, p.nativeFlush, p.attr.CapFlagsEx, p.iwarp)
	ptr := unsafe.Pointer(unsafe.SliceData(b))
	var pin runtime.Pinner
	pin.Pin(ptr) // a no-op for memory outside the Go heap
	mr, err := p.pd.RegMR(ptr, len(b), access)
	if err != nil && !p.nativeFlush && access&ibv.AccessFlushPersistent != 0 && errors.Is(err, syscall.EINVAL) {
		// The device grants a native persistent flush only on persistent
		// memory (rxe). An emulated build registers the memory as
		// librpma 1.2 does, for emulated flushers; a native persistent
		// flush into it fails with a remote access error, as it must
		// into memory that is not persistent.
		rpma.Logf(rpma.LogInfo, "ibv_reg_mr(length=%d, access=0x%x): %v: registered without IBV_ACCESS_FLUSH_PERSISTENT (not persistent memory?)", len(b), access, err)
		access &^= ibv.AccessFlushPersistent
		mr, err = p.pd.RegMR(ptr, len(b), access)
	}
	odp := false
	if errors.Is(err, syscall.EOPNOTSUPP) {
		if !p.odp {
			pin.Unpin()
			rpma.Logf(rpma.LogError, "Peer does not support On-Demand Paging: ibv_reg_mr(length=%d, access=0x%x): %v", len(b), access, err)
			return nil, rpmaerr.New("ibv_reg_mr", rpma.CodeProvider, syscall.EOPNOTSUPP, msgNoODPForRegistration)
		}
		// librpma retries with On-Demand Paging (FsDAX memory).
		mr, err = p.pd.RegMR(ptr, len(b), access|ibv.AccessOnDemand)
		if err != nil {
			pin.Unpin()
			return nil, providerMsg("mr_reg", err, "registration with On-Demand Paging (maybe FsDAX?) failed: length=%d, access=0x%x|IBV_ACCESS_ON_DEMAND", len(b), access)
		}
		odp = true
	} else if err != nil {
		pin.Unpin()
		if err := pinError("mr_reg", err, len(b), "ibv_reg_mr"); err != nil {
			return nil, err
		}
		if access&ibv.AccessFlushPersistent != 0 && errors.Is(err, syscall.EINVAL) {
			// rxe (and the specification's rule for the access flag)
			// grants a native persistent flush only on persistent memory.
			return nil, providerMsg("mr_reg", err, msgFlushPersistentMemory, len(b), access)
		}
		return nil, providerMsg("mr_reg", err, "length=%d, access=0x%x", len(b), access)
	}
	m := &MR{
		pin:    pin,
		peer:   p,
		mr:     mr,
		buf:    b,
		usage:  usage,
		access: access,
		odp:    odp,
		addr:   mr.Addr,
		size:   mr.Length,
		lkey:   mr.LKey,
		rkey:   mr.RKey,
		leak:   leak.Track("mr.Local"),
	}
	m.open()
	return m, nil
}

// Bytes returns the registered memory, nil when m is nil or closed.
func (m *MR) Bytes() []byte {
	if m == nil || m.closed() {
		return nil
	}
	return m.buf
}

// Addr mirrors rpma_mr_get_ptr: the registration's address (ibv_mr addr).
func (m *MR) Addr() uint64 {
	if m == nil {
		return 0
	}
	return m.addr
}

// Size mirrors rpma_mr_get_size (ibv_mr length).
func (m *MR) Size() int {
	if m == nil {
		return 0
	}
	return int(m.size)
}

// Usage returns the usage the region was registered with.
func (m *MR) Usage() int {
	if m == nil {
		return 0
	}
	return m.usage
}

// Access returns the IBV_ACCESS_* flags of the registration.
func (m *MR) Access() int {
	if m == nil {
		return 0
	}
	return m.access
}

// ODP reports whether the registration needed On-Demand Paging.
func (m *MR) ODP() bool { return m != nil && m.odp }

// Descriptor is mr.Local.Descriptor's core; see there.
func (m *MR) Descriptor() [DescriptorSize]byte {
	if m == nil {
		return [DescriptorSize]byte{}
	}
	return descriptor(m.addr, m.size, m.rkey, m.usage)
}

// descriptor encodes a region's descriptor (rpma_mr_get_descriptor).
func descriptor(addr, size uint64, rkey uint32, usage int) [DescriptorSize]byte {
	var d [DescriptorSize]byte
	binary.LittleEndian.PutUint64(d[0:], addr)
	binary.LittleEndian.PutUint64(d[8:], size)
	binary.LittleEndian.PutUint32(d[16:], rkey)
	d[20] = uint8(usage)
	return d
}

// ExtendedDescriptor is mr.Local.ExtendedDescriptor's core; see there.
func (m *MR) ExtendedDescriptor() [ExtendedDescriptorSize]byte {
	if m == nil {
		return [ExtendedDescriptorSize]byte{}
	}
	return extendedDescriptor(m.Descriptor(), m.usage)
}

// extendedDescriptor appends usage's bits above the first byte to the
// descriptor base.
func extendedDescriptor(base [DescriptorSize]byte, usage int) [ExtendedDescriptorSize]byte {
	var d [ExtendedDescriptorSize]byte
	copy(d[:], base[:])
	d[DescriptorSize] = uint8(usage & usageRemote >> 8)
	return d
}

// Advise mirrors rpma_mr_advise (ibv_advise_mr).
func (m *MR) Advise(off, n int, advice int, flags uint32) error {
	const op = "mr_advise"
	if m == nil {
		return errNil(op, "memory region")
	}
	if !m.enter() {
		return errClosed(op, "memory region")
	}
	defer m.exit()
	if err := checkRange(op, "memory region", off, n, m.size); err != nil {
		return err
	}
	err := m.peer.pd.AdviseMR(advice, flags, m.addr+uint64(off), uint32(n), m.lkey)
	var errno syscall.Errno
	switch {
	case err == nil:
		return nil
	case errors.As(err, &errno) && errno == syscall.EOPNOTSUPP:
		return rpmaerr.New("ibv_advise_mr", rpma.CodeNoSupp, errno, "")
	case errors.As(err, &errno) && (errno == syscall.EFAULT || errno == syscall.EINVAL):
		return rpmaerr.New("ibv_advise_mr", rpma.CodeInval, errno, "")
	}
	return provider(op, err)
}

// Close is mr.Local.Dereg's core; see there.
func (m *MR) Close() error {
	if m == nil {
		return nil
	}
	m.lock()
	defer m.unlock()
	if m.finished() {
		return nil
	}
	if n := m.grants.Load(); n > 0 {
		return rpmaerr.New("mr_dereg", rpma.CodeInval, syscall.EBUSY,
			"the region has %d live grants: revoke them (Grant.Revoke) or close their connections first", n)
	}
	m.markClosed()
	if err := m.mr.Dereg(); err != nil {
		m.closeFailed() // still registered: a retried Close deregisters it
		return provider("mr_dereg", err)
	}
	m.pin.Unpin()
	regmem.Remove(m)
	m.peer.release()
	m.leak.Release()
	return nil
}

// checkRange checks [off, off+n) against a region of size bytes.
func checkRange(op, what string, off, n int, size uint64) error {
	if off < 0 || n < 0 {
		return rpmaerr.Inval(op, "negative offset %d or length %d", off, n)
	}
	if uint64(off) > size || uint64(n) > size-uint64(off) {
		return rpmaerr.Inval(op, "[%d, %d+%d) is outside the %s of %d bytes", off, off, n, what, size)
	}
	if uint64(n) > 1<<32-1 {
		return rpmaerr.Inval(op, "length %d exceeds 2^32-1", n)
	}
	return nil
}

// RemoteMR mirrors struct rpma_mr_remote: a memory region of the other
// side, known from its descriptor.
type RemoteMR struct {
	raddr uint64
	size  uint64
	rkey  uint32
	usage int
}

// RemoteFromDescriptor is mr.RemoteFromDescriptor's core; see there.
func RemoteFromDescriptor(desc []byte) (*RemoteMR, error) {
	const op = "mr_remote_from_descriptor"
	if len(desc) < DescriptorSize {
		return nil, rpmaerr.Inval(op, "descriptor of %d bytes, need %d", len(desc), DescriptorSize)
	}
	return decodeDescriptor(op, desc, 0)
}

// RemoteFromExtendedDescriptor is mr.RemoteFromExtendedDescriptor's core; see there.
func RemoteFromExtendedDescriptor(desc []byte) (*RemoteMR, error) {
	const op = "mr_remote_from_extended_descriptor"
	if len(desc) < ExtendedDescriptorSize {
		return nil, rpmaerr.Inval(op, "extended descriptor of %d bytes, need %d", len(desc), ExtendedDescriptorSize)
	}
	ext := int(desc[DescriptorSize]) << 8
	if ext&^usageRemote != 0 {
		return nil, rpmaerr.Inval(op, "unknown usage bits 0x%x", ext&^usageRemote)
	}
	return decodeDescriptor(op, desc, ext)
}

// decodeDescriptor decodes the 21 bytes of librpma's descriptor at the
// start of desc, with the usage bits ext added to its usage byte; a zero
// usage is invalid.
func decodeDescriptor(op string, desc []byte, ext int) (*RemoteMR, error) {
	usage := int(desc[20]) | ext
	if usage == 0 {
		return nil, rpmaerr.Inval(op, "usage type of memory is not set")
	}
	return &RemoteMR{
		raddr: binary.LittleEndian.Uint64(desc[0:]),
		size:  binary.LittleEndian.Uint64(desc[8:]),
		rkey:  binary.LittleEndian.Uint32(desc[16:]),
		usage: usage,
	}, nil
}

// Size mirrors rpma_mr_remote_get_size.
func (r *RemoteMR) Size() uint64 {
	if r == nil {
		return 0
	}
	return r.size
}

// FlushType mirrors rpma_mr_remote_get_flush_type: the usage's flush bits.
func (r *RemoteMR) FlushType() int {
	if r == nil {
		return 0
	}
	return r.usage & usageFlushAny
}

// Usage returns the remote region's usage bits.
func (r *RemoteMR) Usage() int {
	if r == nil {
		return 0
	}
	return r.usage
}

// Addr is mr.Remote.Addr's core; see there.
func (r *RemoteMR) Addr() uint64 {
	if r == nil {
		return 0
	}
	return r.raddr
}

// RKey returns the remote region's key.
func (r *RemoteMR) RKey() uint32 {
	if r == nil {
		return 0
	}
	return r.rkey
}

// Descriptor is mr.Remote.Descriptor's core; see there.
func (r *RemoteMR) Descriptor() [DescriptorSize]byte {
	if r == nil {
		return [DescriptorSize]byte{}
	}
	return descriptor(r.raddr, r.size, r.rkey, r.usage)
}

// ExtendedDescriptor is mr.Remote.ExtendedDescriptor's core; see there.
func (r *RemoteMR) ExtendedDescriptor() [ExtendedDescriptorSize]byte {
	if r == nil {
		return [ExtendedDescriptorSize]byte{}
	}
	return extendedDescriptor(r.Descriptor(), r.usage)
}

// pinError is the error of a registration of n bytes (what: which one)
// that the kernel refused to pin because of the locked-memory limit:
// ENOMEM from ib_umem_get, for a process without CAP_IPC_LOCK, whose
// RLIMIT_MEMLOCK is finite. It names the limit and what to do; for any
// other failure it is nil.
func pinError(op string, err error, n int, what string) error {
	limit, ok := memlockLimit()
	if !ok || !errors.Is(err, syscall.ENOMEM) {
		return nil
	}
	return providerMsg(op, err, "%s: "+msgMemlock, what, n, limit)
}

// regError is the error of a registration of n bytes (what: which one)
// the provider refused: pinError's when the locked-memory limit was the
// cause, else the provider's, saying what was registered.
func regError(op string, err error, n int, what string) error {
	if perr := pinError(op, err, n, what); perr != nil {
		return perr
	}
	return providerMsg(op, err, "%s", what)
}
