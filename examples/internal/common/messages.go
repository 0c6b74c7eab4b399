// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright (c) 2020-2021 Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/06-multiple-connections/multiple-connections-common.h
//   examples/06-multiple-connections/client.c
//   examples/common/common-messages-ping-pong.h
//   examples/10-send-with-imm/client.c
//   examples/11-write-with-imm/client.c
//   examples/12-receive-completion-queue/receive-completion-queue-common.h
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Example 06-multiple-connections and 06scch-multiple-connections
// (multiple-connections-common.h, server.c, client.c).
const (
	// MaxNameSize mirrors MAX_NAME_SIZE: the client's name buffer, read by
	// the server with one 32-byte rpma_read.
	MaxNameSize = 32
	// ClientMax mirrors CLIENT_MAX (06, 06scch, 13): the server's client
	// slots. In 06 slot i receives the name at i*MaxNameSize of its
	// MaxNameSize*ClientMax-byte READ_DST region.
	ClientMax = 10
)

// Names06 is Names[] of 06-multiple-connections/client.c as far as librpma's
// history shows it (12 names); Names06scch is the 06scch client's list,
// which adds "Kacper" (13 names). A client picks
// names[rand() % len(names)] after srand(seed % UINT_MAX); see PickName.
var (
	Names06 = []string{"Andy", "Chet", "Derek", "Janek", "Lukasz", "Oksana",
		"Pawel", "Piotr", "Tomasz", "Xiang", "Xiaoran", "Xiaoyan"}
	Names06scch = []string{"Andy", "Chet", "Derek", "Janek", "Kacper", "Lukasz",
		"Oksana", "Pawel", "Piotr", "Tomasz", "Xiang", "Xiaoran", "Xiaoyan"}
)

// PickName picks the name a 06 client with this seed picks:
// srand(seed % UINT_MAX); names[rand() % len(names)], with glibc's rand
// (GlibcRand). names must not be empty.
func PickName(names []string, seed uint64) string {
	r := NewGlibcRand(uint32(seed % math.MaxUint32))
	return names[uint64(r.Rand())%uint64(len(names))]
}

// EncodeName returns the MaxNameSize-byte buffer a 06 client exposes:
// strncpy(buf, name, MAX_NAME_SIZE - 1) on a zeroed buffer plus
// buf[MAX_NAME_SIZE-1] = 0, so the name is cut to 31 bytes, NUL-terminated
// and zero-padded.
func EncodeName(name string) [MaxNameSize]byte {
	var b [MaxNameSize]byte
	Strncpy(b[:MaxNameSize-1], name, MaxNameSize-1)
	return b
}

// DecodeName returns the name in a MaxNameSize-byte slot (what the server
// prints after "- "). The slot must be NUL-terminated within MaxNameSize
// bytes.
func DecodeName(b []byte) (string, error) {
	if len(b) < MaxNameSize {
		return "", fmt.Errorf("name: %d < %d bytes: %w", len(b), MaxNameSize, ErrShortBuffer)
	}
	return cStringStrict("name", b[:MaxNameSize])
}

// Ping-pong messages of examples 08, 08srq, 12, 12scch and 13
// (common-messages-ping-pong.h, receive-completion-queue-common.h).
const (
	// MsgSize mirrors MSG_SIZE (sizeof(uint64_t)): every message is one
	// little-endian uint64 counter. The 08/08srq/13 receivers reject a
	// receive completion whose byte_len is not exactly MsgSize.
	MsgSize = 8
	// RecvOffset mirrors RECV_OFFSET (0) and SendOffset mirrors SEND_OFFSET
	// (MSG_SIZE) of common-messages-ping-pong.h ("both buffers allocated one
	// after another"); the examples actually allocate and register the two
	// buffers separately, each used at offset 0.
	RecvOffset = 0
	SendOffset = MsgSize
	// IMDone mirrors I_M_DONE (UINT64_MAX): the client's last message,
	// after which the server stops (without printing it).
	IMDone uint64 = math.MaxUint64
	// MaxNWC mirrors MAX_N_WC: at most 2 completions (1 send + 1 receive)
	// are polled at once in wait_and_process_completions().
	MaxNWC = 2
	// RCQSize mirrors RCQ_SIZE of 12/12scch (receive-completion-queue-common.h)
	// and of 08srq's server "r" mode: the receive CQ size they configure.
	RCQSize = 10
	// Timeout5s mirrors TIMEOUT_5S, 13's default listening time (its
	// optional <timeout> argument is in seconds).
	Timeout5s = 5 * time.Second
)

// EncodeCounter returns the MsgSize bytes of a ping-pong message.
func EncodeCounter(v uint64) [MsgSize]byte {
	var b [MsgSize]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b
}

// DecodeCounter decodes a received ping-pong message. Like the C validation
// of wc.byte_len it needs exactly MsgSize bytes.
func DecodeCounter(b []byte) (uint64, error) {
	if len(b) != MsgSize {
		return 0, fmt.Errorf("message: %d bytes, want %d: %w", len(b), MsgSize, ErrInvalid)
	}
	return binary.LittleEndian.Uint64(b), nil
}

// SlotOffset is where 13's server posts the receive (in its receive buffer)
// and builds the reply (in its send buffer) for client slot i: i*MsgSize.
// The completion's wr_id points at the receive slot, which is how the server
// finds the slot again.
func SlotOffset(i int) int { return i * MsgSize }

// Examples 10-send-with-imm and 11-write-with-imm.
const (
	// ImmPrivateDataSize is the length of 10's connect private data: the
	// expected immediate value as a host-order (little-endian) uint32.
	ImmPrivateDataSize = 4
	// ImmMessageSize is the length 10's client sends when it has a word
	// (KILOBYTE; 0 without one) and the length 11's client writes.
	ImmMessageSize = Kilobyte
)

// EncodeImm returns the 4 bytes of a host-order uint32: 10's connect private
// data and the first 4 bytes 11's client writes.
func EncodeImm(imm uint32) [ImmPrivateDataSize]byte {
	var b [ImmPrivateDataSize]byte
	binary.LittleEndian.PutUint32(b[:], imm)
	return b
}

// DecodeImm reads the expected immediate value from 10's connect private
// data or from the start of the region 11 writes. Like 10's server
// (pdata.len < sizeof(uint32_t) is an error) it needs at least 4 bytes and
// ignores the rest.
func DecodeImm(b []byte) (uint32, error) {
	if len(b) < ImmPrivateDataSize {
		return 0, fmt.Errorf("immediate: %d < %d bytes: %w", len(b), ImmPrivateDataSize, ErrShortBuffer)
	}
	return binary.LittleEndian.Uint32(b), nil
}

// ParseImm parses the <imm> argument of the 10 and 11 clients: strtoul base
// 10 (see StrtoulNoError), then "The provided immediate data is too big
// (%lu > %u)" if it exceeds UINT32_MAX.
func ParseImm(s string) (uint32, error) {
	v, err := StrtoulNoError(s)
	if err != nil {
		return 0, err
	}
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("the provided immediate data is too big (%d > %d): %w", v, uint64(math.MaxUint32), ErrInvalid)
	}
	return uint32(v), nil
}

// EncodeSendWithImm returns what 10's client sends: without a word, nothing
// (a 0-byte send with immediate data); with one, a KILOBYTE buffer holding
// strncpy(buf, word, KILOBYTE - 1) on zeroed memory.
func EncodeSendWithImm(word string, hasWord bool) []byte {
	if !hasWord {
		return nil
	}
	b := make([]byte, ImmMessageSize)
	Strncpy(b, word, ImmMessageSize-1)
	return b
}

// EncodeWriteWithImm returns the KILOBYTE bytes 11's client writes with
// rpma_write_with_imm: the immediate value as a little-endian uint32, then
// zeros. The server compares that uint32 with the received immediate.
func EncodeWriteWithImm(imm uint32) []byte {
	b := make([]byte, ImmMessageSize)
	binary.LittleEndian.PutUint32(b, imm)
	return b
}
