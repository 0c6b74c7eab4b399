package mr

import (
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/peer"
)

// Usage mirrors the RPMA_MR_USAGE_* flags: what a memory region is
// registered for. They decide its access flags (see [Reg]) and travel in
// its descriptor.
type Usage int

// Usage flags, with librpma's values.
const (
	// UsageReadSrc: the source of the other side's reads
	// (IBV_ACCESS_REMOTE_READ).
	UsageReadSrc Usage = core.UsageReadSrc
	// UsageReadDst: the destination of this side's reads
	// (IBV_ACCESS_LOCAL_WRITE; on iWARP also IBV_ACCESS_REMOTE_WRITE, as
	// an iWARP read is a write into the reader's memory).
	UsageReadDst Usage = core.UsageReadDst
	// UsageWriteSrc: the source of this side's writes
	// (IBV_ACCESS_LOCAL_WRITE).
	UsageWriteSrc Usage = core.UsageWriteSrc
	// UsageWriteDst: the destination of the other side's writes and
	// atomic writes (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE).
	UsageWriteDst Usage = core.UsageWriteDst
	// UsageFlushVisibility: the other side may flush it to global
	// visibility (rpma.FlushVisibility). Emulated flushes read the
	// region: IBV_ACCESS_REMOTE_READ; with native flush on this side's
	// device, IBV_ACCESS_FLUSH_GLOBAL instead.
	UsageFlushVisibility Usage = core.UsageFlushVisibility
	// UsageFlushPersistent: the other side may flush it to persistence
	// (rpma.FlushPersistent): IBV_ACCESS_REMOTE_READ, or
	// IBV_ACCESS_FLUSH_PERSISTENT with native flush.
	UsageFlushPersistent Usage = core.UsageFlushPersistent
	// UsageSend: the source of sends (no access flag needed).
	UsageSend Usage = core.UsageSend
	// UsageRecv: the destination of receives (IBV_ACCESS_LOCAL_WRITE).
	UsageRecv Usage = core.UsageRecv
	// UsageAtomicDst: the target of the other side's remote atomics,
	// conn.Conn.CompareAndSwap and FetchAndAdd
	// (IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE). This module's
	// own: librpma has no remote atomics, and its descriptor's usage byte
	// has no room for it, so the other side learns it only from
	// [Local.ExtendedDescriptor].
	UsageAtomicDst Usage = core.UsageAtomicDst
	// UsageGranted: the region's remote usages (UsageReadSrc,
	// UsageWriteDst, the flush usages, UsageAtomicDst) are reachable only
	// through grants, conn.Conn.Grant, each for one connection. The region
	// is registered with IBV_ACCESS_MW_BIND and no remote access of its
	// own, so its own key (and its Descriptor) opens nothing to anyone.
	// This module's own, for serving clients that must not reach each
	// other's memory; it needs a device with memory windows of type 2B
	// (else Reg fails with an error matching [rpma.ErrNotSupported]).
	UsageGranted Usage = core.UsageGranted
)

// DescriptorSize mirrors rpma_mr_get_descriptor_size: a descriptor is
// always 21 bytes.
const DescriptorSize = core.DescriptorSize

// ExtendedDescriptorSize is the size of [Local.ExtendedDescriptor]: 22
// bytes.
const ExtendedDescriptorSize = core.ExtendedDescriptorSize

// Local mirrors struct rpma_mr_local: memory registered with a peer's
// protection domain. A Local is a child of its peer, which refuses to
// close while it is registered.
//
// All methods are safe for concurrent use; Dereg must not race with
// operations that use the region (their work requests would fail with a
// local protection error).
type Local core.MR

func (m *Local) core() *core.MR { return (*core.MR)(m) }

// Reg mirrors rpma_mr_reg: it registers b with p for usage (ibv_reg_mr)
// with the access flags librpma derives from the usage (see [Usage]).
//
// b must not be Go-heap memory: the device reads and writes it behind the
// Go runtime's back for as long as it is registered. Use
// [github.com/gorpma/rpma/pmem.Alloc] (page-aligned DRAM) or
// [github.com/gorpma/rpma/pmem.Map] (persistent memory: Device DAX, a
// MAP_SYNC file on a DAX file system, or a plain shared file mapping,
// with the matching persist call), or other memory from mmap. b must stay
// mapped until Dereg.
//
// When the device refuses the memory with EOPNOTSUPP (memory it cannot
// pin: a file on a DAX file system, FsDAX), Reg retries with On-Demand
// Paging if the device supports it; otherwise the error matches
// [rpma.ErrProvider] and EOPNOTSUPP, and says that ODP is needed, as
// librpma's "maybe FSDAX?" log does.
//
// Registration pins b, and pinned memory counts against the process's
// locked-memory limit (RLIMIT_MEMLOCK, often 8 MiB for a non-root user)
// unless it has CAP_IPC_LOCK (root has). Beyond the limit the kernel
// refuses with ENOMEM, and the error says so: it names RLIMIT_MEMLOCK,
// its value and CAP_IPC_LOCK (see the package documentation).
//
// Errors: a nil or closed p, an empty b, a zero usage or unknown usage
// bits match [rpma.ErrInvalidArgument]; a failing ibv_reg_mr matches
// [rpma.ErrProvider] and its errno.
func Reg(p *peer.Peer, b []byte, usage Usage) (*Local, error) {
	m, err := core.RegMR((*core.Peer)(p), b, int(usage))
	return (*Local)(m), err
}

// Bytes returns the registered memory (the b given to Reg), nil when m is
// nil or deregistered.
func (m *Local) Bytes() []byte { return m.core().Bytes() }

// Addr mirrors rpma_mr_get_ptr: the registered address.
func (m *Local) Addr() uint64 { return m.core().Addr() }

// Size mirrors rpma_mr_get_size: the registered length.
func (m *Local) Size() int { return m.core().Size() }

// Usage returns the usage m was registered with.
func (m *Local) Usage() Usage { return Usage(m.core().Usage()) }

// ODP reports whether the registration needed On-Demand Paging.
func (m *Local) ODP() bool { return m.core().ODP() }

// Descriptor mirrors rpma_mr_get_descriptor: the 21 bytes the other side
// needs to read, write or flush m, byte-compatible with librpma:
// little-endian address (8 bytes), length (8), rkey (4), then the usage
// byte. Send it to the other side, which decodes it with
// [RemoteFromDescriptor]. Descriptors travel unauthenticated.
func (m *Local) Descriptor() [DescriptorSize]byte { return m.core().Descriptor() }

// ExtendedDescriptor is this module's descriptor (librpma has none): the
// 21 bytes of [Local.Descriptor], then one byte of the usages that do not
// fit its usage byte (usage >> 8: [UsageAtomicDst]). The other side
// decodes it with [RemoteFromExtendedDescriptor]. A C librpma peer can
// read its first 21 bytes as a descriptor, and does not see those usages.
func (m *Local) ExtendedDescriptor() [ExtendedDescriptorSize]byte {
	return m.core().ExtendedDescriptor()
}

// Advice mirrors enum ibv_advise_mr_advice.
type Advice int

// Advice values and the flag of [Local.Advise].
const (
	AdvicePrefetch        Advice = 0 // IBV_ADVISE_MR_ADVICE_PREFETCH
	AdvicePrefetchWrite   Advice = 1 // IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE
	AdvicePrefetchNoFault Advice = 2 // IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT

	AdviseFlagFlush uint32 = 1 // IBV_ADVISE_MR_FLAG_FLUSH: advise synchronously
)

// Advise mirrors rpma_mr_advise (ibv_advise_mr): advice about [off, off+n)
// of an ODP registration, for example prefetching FsDAX memory
// (AdvicePrefetchWrite with AdviseFlagFlush, as librpma's example 05).
// A device that cannot take advice (rxe) gives an error matching
// [rpma.ErrNotSupported]; EFAULT and EINVAL match
// [rpma.ErrInvalidArgument].
func (m *Local) Advise(off, n int, advice Advice, flags uint32) error {
	return m.core().Advise(off, n, int(advice), flags)
}

// Dereg mirrors rpma_mr_dereg (ibv_dereg_mr). When ibv_dereg_mr fails,
// m stays registered (as librpma's region does), refuses every use, and
// Dereg may be called again. While grants of m are live
// (conn.Conn.Grant) it refuses with an error matching
// [rpma.ErrInvalidArgument] and EBUSY and m stays usable: revoke them
// (conn.Grant.Revoke) or close their connections first. It is idempotent
// and nil-safe.
func (m *Local) Dereg() error { return m.core().Close() }

// Close is Dereg.
func (m *Local) Close() error { return m.core().Close() }

// Remote mirrors struct rpma_mr_remote: the other side's memory region,
// decoded from its descriptor. It holds no C resources: there is nothing
// to delete (rpma_mr_remote_delete); drop it. It is immutable and safe for
// concurrent use.
type Remote core.RemoteMR

func (r *Remote) core() *core.RemoteMR { return (*core.RemoteMR)(r) }

// RemoteFromDescriptor mirrors rpma_mr_remote_from_descriptor: it decodes
// the 21-byte descriptor at the start of desc (bytes after it are
// ignored). A shorter desc or a zero usage byte is an error matching
// [rpma.ErrInvalidArgument]; other usage bits are not checked, as in
// librpma.
func RemoteFromDescriptor(desc []byte) (*Remote, error) {
	r, err := core.RemoteFromDescriptor(desc)
	return (*Remote)(r), err
}

// RemoteFromExtendedDescriptor decodes the 22 bytes of
// [Local.ExtendedDescriptor] at the start of desc (bytes after them are
// ignored). A shorter desc, a zero usage or unknown usage bits are an
// error matching [rpma.ErrInvalidArgument].
func RemoteFromExtendedDescriptor(desc []byte) (*Remote, error) {
	r, err := core.RemoteFromExtendedDescriptor(desc)
	return (*Remote)(r), err
}

// Size mirrors rpma_mr_remote_get_size.
func (r *Remote) Size() uint64 { return r.core().Size() }

// FlushUsage mirrors rpma_mr_remote_get_flush_type: the flush usages of
// the remote region, UsageFlushVisibility, UsageFlushPersistent, both or
// neither (librpma's function returns these usage bits too, not an
// rpma.FlushType). The flushes
// [github.com/gorpma/rpma/conn.Conn.Flush] allows follow from them:
// rpma.FlushPersistent needs UsageFlushPersistent (and the other side's
// direct write to pmem), rpma.FlushVisibility needs UsageFlushVisibility.
func (r *Remote) FlushUsage() Usage { return Usage(r.core().FlushType()) }

// FlushType is FlushUsage under its first name, which suggested an
// rpma.FlushType; it returns usage bits.
//
// Deprecated: use [Remote.FlushUsage].
func (r *Remote) FlushType() Usage { return r.FlushUsage() }

// Descriptor returns the 21-byte descriptor r was decoded from
// ([RemoteFromDescriptor] ignores bytes after them), byte for byte, so a
// Remote can be handed on (to another connection, a file, a log) and
// decoded again. A nil r gives all zeros. Like [Local.Descriptor] it has
// no room for [UsageAtomicDst]: a Remote decoded with
// [RemoteFromExtendedDescriptor] is handed on whole with
// [Remote.ExtendedDescriptor].
func (r *Remote) Descriptor() [DescriptorSize]byte { return r.core().Descriptor() }

// ExtendedDescriptor returns the 22 bytes of [Local.ExtendedDescriptor]
// for r: [Remote.Descriptor], then the usages that do not fit its usage
// byte ([UsageAtomicDst]), for [RemoteFromExtendedDescriptor] to decode
// again. A nil r gives all zeros.
func (r *Remote) ExtendedDescriptor() [ExtendedDescriptorSize]byte {
	return r.core().ExtendedDescriptor()
}

// Usage returns the remote region's usage.
func (r *Remote) Usage() Usage { return Usage(r.core().Usage()) }

// Addr returns the remote region's address (the registrant's).
func (r *Remote) Addr() uint64 { return r.core().Addr() }
