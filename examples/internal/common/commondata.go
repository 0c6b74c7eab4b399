// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-conn.h
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/session"
)

// Sizes of struct common_data (librpma examples/common/common-conn.h) and of
// the descriptors it carries (librpma src/mr.c, src/peer_cfg.c).
const (
	// CommonDataSize is sizeof(struct common_data): 2 + 1 + 1 + 24, no
	// padding (alignment 2).
	CommonDataSize = session.OfferSize
	// DescriptorsMaxSize mirrors DESCRIPTORS_MAX_SIZE: the room for the
	// descriptors, chosen so the struct fits the 56 bytes of private data
	// rdma_connect allows (RDMA_PS_TCP).
	DescriptorsMaxSize = session.DescriptorsMaxSize
	// MRDescriptorSize is RPMA_MR_DESC_SIZE, what
	// rpma_mr_get_descriptor_size always returns.
	MRDescriptorSize = mr.DescriptorSize
	// PeerCfgDescriptorSize is what rpma_peer_cfg_get_descriptor_size always
	// returns.
	PeerCfgDescriptorSize = peer.CfgDescriptorSize
)

// Byte offsets inside struct common_data, for DecodeCommonDataMROnly.
const (
	commonDataOffsetOff  = 0 // uint16_t data_offset, host (little-endian) order
	commonMRDescSizeOff  = 2 // uint8_t mr_desc_size
	commonDescriptorsOff = 4 // char descriptors[24]
)

// ErrShortBuffer is returned (wrapped) when a buffer is shorter than the
// layout it should hold.
var ErrShortBuffer = errors.New("buffer too short")

// ErrInvalid is returned (wrapped) for values a layout cannot hold or that
// are inconsistent.
var ErrInvalid = errors.New("invalid value")

// CommonData is struct common_data, the private data with which most
// examples hand a memory region (and 05 also a peer configuration) to the
// other side. The library's session package implements it as
// session.Offer (its MarshalBinary and UnmarshalBinary, whose errors
// match rpma.ErrInvalidArgument), which is what lets a session.Connect
// client talk to these servers; the examples use the same code.
//
// The C examples always send exactly CommonDataSize bytes; a receiver may get
// more (rdma_cm can pad private data) and only checks len >= 28.
type CommonData = session.Offer

// DecodeCommonDataMROnly decodes struct common_data the way every C reader
// except 05's client uses it: data_offset and descriptors[0:mr_desc_size],
// ignoring pcfg_desc_size altogether (PeerCfgDesc is nil). Use it when the
// peer may not initialise pcfg_desc_size (06's C client historically sent
// an uninitialised struct). It needs CommonDataSize bytes and
// mr_desc_size <= DescriptorsMaxSize.
func DecodeCommonDataMROnly(b []byte) (CommonData, error) {
	if len(b) < CommonDataSize {
		return CommonData{}, fmt.Errorf("common_data: private data too small (%d < %d): %w",
			len(b), CommonDataSize, ErrShortBuffer)
	}
	mr := int(b[commonMRDescSizeOff])
	if mr > DescriptorsMaxSize {
		return CommonData{}, fmt.Errorf("common_data: mr_desc_size %d exceeds %d: %w",
			mr, DescriptorsMaxSize, ErrInvalid)
	}
	return CommonData{
		DataOffset: binary.LittleEndian.Uint16(b[commonDataOffsetOff:]),
		MRDesc:     append([]byte(nil), b[commonDescriptorsOff:commonDescriptorsOff+mr]...),
	}, nil
}
