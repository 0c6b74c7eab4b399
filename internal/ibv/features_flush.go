//go:build rpma_native_flush

package ibv

// HaveWRFlush reports whether this build can post native RDMA flushes: the
// build tag rpma_native_flush says libibverbs is rdma-core 45 or later.
const HaveWRFlush = true
