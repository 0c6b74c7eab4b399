// Package roce decodes RoCEv2 packets, the InfiniBand transport headers
// Soft-RoCE (rxe) sends inside UDP to port 4791, far enough for tests that
// check what crossed a wire and in which order: the opcode, the
// destination QP, the packet sequence number (PSN), the RDMA extended
// header (RETH) and the payload.
//
// It follows the InfiniBand Architecture Specification (volume 1, chapter
// 9, "Transport layer") and its RoCEv2 annex: a Base Transport Header
// (BTH, 12 bytes) after the UDP header, then the extension headers the
// opcode calls for, the payload, pad bytes to a multiple of 4 and the
// 4-byte invariant CRC. Only the reliable-connected (RC) opcodes are
// named; the others decode with their BTH and no extension header.
package roce
