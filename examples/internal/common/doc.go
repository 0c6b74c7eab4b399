// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Package common holds what the Go ports of librpma's examples share with
// each other and, byte for byte, with librpma's C examples
// (github.com/pmem/rpma, examples/): the private-data layouts exchanged at
// connection time, the memory layouts one side reads or writes remotely,
// the PMem signature convention, the constants, and the few libc behaviours
// (strtoul, srand/rand) whose results a C peer or a test can observe; and
// the plumbing every example repeats, as librpma's examples/common does for
// the C ones.
//
// # Layouts
//
// The layouts are pure Go and work on plain byte slices, so they run on
// DRAM buffers, PMem mappings (the library's pmem.Region) and test buffers
// alike. Byte order: the C examples copy their structs in host order; every
// target librpma supports is little-endian (x86-64, aarch64, ppc64le), so
// the layouts here are little-endian and documented at the byte level. See
// EXAMPLES.md in this directory for the behaviour of each example.
//
// Layouts (all verified against the C definitions compiled with gcc on
// x86-64):
//
//	struct common_data (28 B)  data_offset u16 @0, mr_desc_size u8 @2,
//	                           pcfg_desc_size u8 @3, descriptors[24] @4
//	struct hello_t (1028 B)    lang u32 @0 (enum lang_t), str[1024] @4
//	struct log (1040 B, ex.07) signature[8] @0 ("LOG\0\0\0\0\0"),
//	                           used u64 @8, data[1024] @16
//	06 client name             char[32], NUL-terminated, zero-padded
//	08/08srq/12/13 message     u64 counter (MSG_SIZE 8), UINT64_MAX = done
//	10 connect private data    u32 immediate value (4 B)
//	11 written data            1024 B, the first 4 are the u32 immediate
//
// The GPSPM protobuf messages of examples 09/09scch live in the gpspm
// subpackage.
//
// # Plumbing
//
// The helpers on the library mirror librpma's examples/common where there
// is a C counterpart, and keep its messages; an example's main.go keeps
// the RDMA steps it is about (its reads, writes, flushes, sends and
// receives, and their completions), only the set-up and tear-down move
// here. Each helper bounds its waits by Timeout.
//
//	program.go        Start, Exit: usage line, log thresholds, exit status;
//	                  Arg, StrtoulArg: optional arguments
//	peer.go           PeerViaAddress (common_peer_via_address), Listen
//	connect.go        ClientConnect (client_connect), ServerAccept
//	                  (server_accept_connection), Establish, ExpectEvent
//	disconnect.go     DisconnectAndWaitForClose, WaitForCloseAndDisconnect
//	passive.go        AcceptAndWaitForClose, ConnectAndWaitForClose: the
//	                  side that does nothing while its peer reads or writes
//	clients.go        ServeClients: the 06 servers' slots and idle timeout
//	dram.go           RegDRAM: malloc_aligned + rpma_mr_reg
//	mem.go            Mem (struct common_mem), OpenMem: PMem with the
//	                  signature, or DRAM; MapPMem (pmem_map_file)
//	greeting.go       OpenHello, TranslateHello: the hello_t clients
//	advise.go         AdviseFsDAX (rpma_mr_advise)
//	remotemr.go       RemoteMR, PrivateDataFor: a region in common_data
//	completion.go     WaitForCompletion, WaitAndValidate, ValidateWC
//	sharedchannel.go  SharedChannel: completions with rpma_conn_wait
//	pingpong.go       WaitAndProcessCompletions, ValidateMessageWC
//	                  (common-messages-ping-pong.c)
//	msgbuffers.go     MessageBuffers: the ping-pong's receive and send buffers
//	closewith.go      CloseWith: deferred closes that keep their errors
package common
