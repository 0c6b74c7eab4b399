// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-conn.h
//   examples/run-all-examples.sh
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import "time"

// Constants of librpma's examples/common/common-conn.h and of
// examples/run-all-examples.sh.
const (
	// Kilobyte mirrors KILOBYTE (1024), the buffer size most examples use.
	Kilobyte = 1024

	// Timeout15s mirrors TIMEOUT_15S: how long the 06 servers' epoll_wait
	// waits for the next event before they stop ("Server timed out.").
	Timeout15s = 15 * time.Second

	// DefaultPort is the port run-all-examples.sh uses when none is given.
	// The examples themselves have no default: the port is a required
	// argument (a service name or number, passed to getaddrinfo).
	DefaultPort = 7204

	// PMemClientOffset mirrors PMEM_CLIENT_OFFSET of run-all-examples.sh:
	// the <pmem-offset> it passes to every client that gets <pmem-path>.
	PMemClientOffset = 1024

	// FlushID mirrors FLUSH_ID ((void *)0xF01D), the op_context (wc.wr_id)
	// of the flush of examples 05 and 07 and the op_context field of the
	// GPSPM request of 09/09scch.
	FlushID uint64 = 0xF01D
)

// Strings the examples print or send.
const (
	// HelloClientMsg is what 01's server sends as its accept private data
	// ("Hello client!", 14 bytes with the NUL) and what 02's server exposes
	// (HELLO_STR) for the client to read.
	HelloClientMsg = "Hello client!"
	// HelloServerMsg is what 01's client sends as its connect private data
	// ("Hello server!", 14 bytes with the NUL).
	HelloServerMsg = "Hello server!"

	// NoPMemMsg mirrors NO_PMEM_MSG when the example was built with
	// libpmem/libpmem2 but got no <pmem-path>; printed to stderr.
	NoPMemMsg = "No <pmem-path> provided. Using DRAM instead.\n"
	// NoPMemSupportMsg mirrors NO_PMEM_MSG when the example was built
	// without libpmem; printed to stderr.
	NoPMemSupportMsg = "The example is unable to use libpmem. If unintended please check the build log. Using DRAM instead.\n"
	// PMemUsage mirrors PMEM_USAGE, appended to the usage line of the
	// examples that accept <pmem-path>.
	PMemUsage = "where <pmem-path> can be:\n" +
		"  - a Device DAX (/dev/dax0.0 for example) or\n" +
		"  - a file on File System DAX (/mnt/pmem/file for example)\n"
)

// Example 01-connection client (client.c).
const (
	// ConnectMaxRetry mirrors MAX_RETRY: how many times 01's client
	// connects before giving up on RPMA_CONN_REJECTED.
	ConnectMaxRetry = 10
	// ConnectRetryDelay mirrors RETRY_DELAY (sleep(5)) between them.
	ConnectRetryDelay = 5 * time.Second
)

// RAWBufferSize mirrors RAW_BUFFER_SIZE of 04's client: the 8-byte
// read-after-write read it posts after its write, from remote offset 0.
const RAWBufferSize = 8

// DirectWriteOn mirrors ON_STR ("on"): 05's server sets
// direct_write_to_pmem to true iff its 4th argument equals it exactly; any
// other value sets false.
const DirectWriteOn = "on"
