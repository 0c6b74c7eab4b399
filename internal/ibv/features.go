//go:build !rpma_native_flush

package ibv

// HaveWRFlush reports whether this build can post native RDMA flushes
// (ibv_wr_flush and IBV_QP_EX_WITH_FLUSH, rdma-core 45 and later). It is
// set by the build tag rpma_native_flush, which the Makefile sets when
// `pkg-config --modversion libibverbs` is 45 or later. The machines this
// module is built on have rdma-core 44, so it is false here: flushes are
// emulated with an RDMA read, as librpma does without native flush
// support.
const HaveWRFlush = false
