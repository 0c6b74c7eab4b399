// Package mr mirrors librpma's memory regions: local registrations
// ([Local], rpma_mr_reg) and the other side's regions known from their
// descriptors ([Remote], rpma_mr_remote_from_descriptor).
//
// # Memory
//
// Registered memory is read and written by the device behind the Go
// runtime's back, so it must never be Go-heap memory. Package
// [github.com/gorpma/rpma/pmem] provides what to register: pmem.Alloc
// (page-aligned anonymous DRAM) and pmem.Map (persistent memory: Device
// DAX, a file mapped MAP_SHARED_VALIDATE|MAP_SYNC on a DAX file system,
// or a plain shared mapping), each with the persist call its kind needs
// (Region.Persist: CPU cache flush and fence, msync, or nothing).
//
// # Usage and access
//
// [Reg] takes librpma's usage flags and maps them to access flags as
// librpma does (rpma_peer_usage2access): see [Usage]. The flush usages
// ask for remote read, because a flush is emulated with an RDMA read,
// unless the registering device flushes natively. The placement (PMem or
// DRAM) is the application's statement: register persistent memory with
// UsageFlushPersistent (and UsageFlushVisibility), DRAM with
// UsageFlushVisibility only.
//
// FsDAX memory cannot be pinned: ibv_reg_mr fails with EOPNOTSUPP and Reg
// retries with On-Demand Paging where the device has it. Soft-RoCE (rxe)
// has no ODP, so there FsDAX registration fails with an error that says
// ODP is needed; use Device DAX.
//
// # Locked memory
//
// The device reads and writes registered memory by physical address, so
// registration pins it, and the kernel counts pinned memory against the
// locked-memory limit, RLIMIT_MEMLOCK, of a process without CAP_IPC_LOCK.
// Root has the capability; other users typically have a limit of 8 MiB
// (64 KiB on older systems), so a program registering more fails in
// [Reg] with ENOMEM and an error that names the limit, its value and
// CAP_IPC_LOCK. Raise the limit (ulimit -l in the shell that starts the
// program, LimitMEMLOCK= in a systemd unit, a memlock line in
// /etc/security/limits.conf) or grant the program CAP_IPC_LOCK (setcap
// cap_ipc_lock+ep). The limit counts every registration of the process
// at once, and registering the same memory twice counts it twice.
//
// The library pins memory of its own too, counted against the same
// limit: each connection with an emulated flush (the default) pins one
// page (4 KiB) for its flush buffer, from conn.NewRequest or
// ep.Endpoint.NextConnReq until it closes, and each conn.Conn.Grant of
// part of a region registers that part again (its size, rounded out to
// pages) until the grant is revoked. At the limit those fail with ENOMEM
// and the same error naming the limit (conn's TestIntegrationConnMemlock
// shows both).
//
// # Descriptors
//
// [Local.Descriptor] and [RemoteFromDescriptor] are byte-compatible with
// librpma (21 bytes: little-endian address, length, rkey, usage), so Go
// and C peers interoperate. [UsageAtomicDst], this module's own usage for
// the target of remote atomics, does not fit the usage byte:
// [Local.ExtendedDescriptor] and [RemoteFromExtendedDescriptor] carry it
// in a 22nd byte (a Remote gives back either form: [Remote.Descriptor],
// [Remote.ExtendedDescriptor]). Descriptors are unauthenticated: exchange
// them over a trusted channel.
//
// # Lifetimes and concurrency
//
// A Local is a child of its peer (peer.Peer.Close refuses while it is
// registered) and is deregistered explicitly with Dereg (or Close), not by
// the garbage collector. Deregistering memory that posted operations
// still use makes them fail with a local protection error. Local and
// Remote are safe for concurrent use.
package mr
