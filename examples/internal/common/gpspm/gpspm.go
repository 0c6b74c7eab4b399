// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020, Intel Corporation
// Copyright 2021, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common/gpspm/flush-to-persistent-GPSPM.h
//   examples/common/gpspm/GPSPM_flush.proto
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Package gpspm holds the General Purpose Server Persistency Method
// messages of librpma's examples 09-flush-to-persistent-GPSPM and
// 09scch-flush-to-persistent-GPSPM: the protobuf flush request/response
// (GPSPM_flush.proto, generated into GPSPM_flush.pb.go) and the layout of
// the messaging buffer both sides register.
//
// The client writes data with an RDMA write, then sends a flush request
// {offset, length, op_context}; the server persists [offset, offset+length)
// of its memory region (pmem_persist) and answers with a flush response
// carrying the same op_context.
//
// Byte layout (protobuf-c and this package agree; every field is a proto2
// required fixed64, i.e. a one-byte tag followed by 8 little-endian bytes,
// fields in field-number order, nothing else):
//
//	request  (27 bytes): 09 <offset:8 LE> 11 <length:8 LE> 19 <op_context:8 LE>
//	response  (9 bytes): 09 <op_context:8 LE>
//
// Decoding follows protobuf rules, not a fixed layout: fields may come in any
// order, unknown fields are skipped, and a missing required field is an error
// (protobuf-c's unpack returns NULL in the same cases). Trailing zero bytes
// are not padding but an invalid tag 0, so decode exactly the received
// length (wc.byte_len), as the C examples do.
package gpspm

//go:generate protoc --go_out=. --go_opt=paths=source_relative GPSPM_flush.proto

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
)

// Messaging buffer layout, from librpma's
// examples/common/gpspm/flush-to-persistent-GPSPM.h.
const (
	// MsgSizeMax mirrors MSG_SIZE_MAX: the size of each of the two message
	// slots (send and receive) in the messaging buffer.
	MsgSizeMax = 512
	// SendOffset mirrors SEND_OFFSET: where the outgoing message (the
	// client's request, the server's response) is packed.
	SendOffset = 0
	// RecvOffset mirrors RECV_OFFSET (SEND_OFFSET + MSG_SIZE_MAX): where the
	// receive for the incoming message is posted, MsgSizeMax bytes long.
	RecvOffset = SendOffset + MsgSizeMax
	// MsgBufferSize is the size both C examples register for messaging
	// (KILOBYTE on the 09 server, HELLO_STR_SIZE elsewhere; both 1024): the
	// two slots back to back.
	MsgBufferSize = 2 * MsgSizeMax
	// RCQSize mirrors RCQ_SIZE: the receive CQ size (rpma_conn_cfg_set_rcq_size)
	// both sides of 09 and 09scch configure.
	RCQSize = 1
)

// Encoded sizes of the two messages (every field present, as proto2
// required fields must be).
const (
	// RequestSize is the packed size of a GPSPM_flush_request: 3 × (1 + 8).
	RequestSize = 27
	// ResponseSize is the packed size of a GPSPM_flush_response: 1 + 8.
	ResponseSize = 9
)

// FlushID mirrors FLUSH_ID ((void *)0xF01D), the op_context the C client
// puts in its flush request and expects back in the response.
const FlushID uint64 = 0xF01D

// ErrTooLarge is returned when a packed message would not fit a
// MsgSizeMax-byte slot (cannot happen for these fixed-size messages; kept
// for the same check the C examples make).
var ErrTooLarge = errors.New("gpspm: packed message bigger than MSG_SIZE_MAX")

// NewRequest returns a flush request with every required field set.
func NewRequest(offset, length, opContext uint64) *GPSPMFlushRequest {
	return &GPSPMFlushRequest{Offset: &offset, Length: &length, OpContext: &opContext}
}

// NewResponse returns a flush response with its required field set.
func NewResponse(opContext uint64) *GPSPMFlushResponse {
	return &GPSPMFlushResponse{OpContext: &opContext}
}

// marshalOptions makes the output deterministic (it already is for these
// messages: no maps, no unknown fields).
var marshalOptions = proto.MarshalOptions{Deterministic: true}

// EncodeRequest packs a flush request as protobuf-c's
// gpspm_flush_request__pack does (RequestSize bytes).
func EncodeRequest(offset, length, opContext uint64) ([]byte, error) {
	return encode(NewRequest(offset, length, opContext))
}

// EncodeResponse packs a flush response as protobuf-c's
// gpspm_flush_response__pack does (ResponseSize bytes).
func EncodeResponse(opContext uint64) ([]byte, error) {
	return encode(NewResponse(opContext))
}

func encode(m proto.Message) ([]byte, error) {
	b, err := marshalOptions.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("gpspm: marshal %T: %w", m, err)
	}
	if len(b) > MsgSizeMax {
		return nil, fmt.Errorf("%w (%d > %d)", ErrTooLarge, len(b), MsgSizeMax)
	}
	return b, nil
}

// DecodeRequest unpacks a flush request from exactly the received bytes
// (wc.byte_len of the receive completion). A missing required field, a
// malformed buffer or trailing garbage is an error.
func DecodeRequest(b []byte) (*GPSPMFlushRequest, error) {
	m := new(GPSPMFlushRequest)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("gpspm: cannot unpack the flush request: %w", err)
	}
	return m, nil
}

// DecodeResponse unpacks a flush response from exactly the received bytes.
func DecodeResponse(b []byte) (*GPSPMFlushResponse, error) {
	m := new(GPSPMFlushResponse)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("gpspm: cannot unpack the flush response: %w", err)
	}
	return m, nil
}

// SendSlot returns the send slot [SendOffset, SendOffset+MsgSizeMax) of a
// messaging buffer of at least MsgBufferSize bytes.
func SendSlot(buf []byte) ([]byte, error) { return slot(buf, SendOffset) }

// RecvSlot returns the receive slot [RecvOffset, RecvOffset+MsgSizeMax) of a
// messaging buffer of at least MsgBufferSize bytes.
func RecvSlot(buf []byte) ([]byte, error) { return slot(buf, RecvOffset) }

func slot(buf []byte, off int) ([]byte, error) {
	if len(buf) < off+MsgSizeMax {
		return nil, fmt.Errorf("gpspm: messaging buffer too small (%d < %d)", len(buf), off+MsgSizeMax)
	}
	return buf[off : off+MsgSizeMax : off+MsgSizeMax], nil
}
