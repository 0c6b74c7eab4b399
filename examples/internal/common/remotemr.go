// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"fmt"
	"math"

	"github.com/gorpma/rpma/mr"
)

// RemoteMR is how librpma's examples take the other side's memory region
// from the connection's private data, a struct common_data
// (DecodeCommonDataMROnly): the region described by
// descriptors[0:mr_desc_size] (rpma_mr_remote_from_descriptor) and
// data_offset, where the data starts in it. Private data shorter than
// CommonDataSize is an error saying, as the C examples do, "Received
// connection's private data is too small (<len> < 28)".
func RemoteMR(pdata []byte) (r *mr.Remote, dataOffset int, err error) {
	if len(pdata) < CommonDataSize {
		return nil, 0, CError("Received connection's private data is too small (%d < %d)", len(pdata), CommonDataSize)
	}
	cd, err := DecodeCommonDataMROnly(pdata)
	if err != nil {
		return nil, 0, err
	}
	if r, err = mr.RemoteFromDescriptor(cd.MRDesc); err != nil {
		return nil, 0, fmt.Errorf("mr.RemoteFromDescriptor: %w", err)
	}
	return r, int(cd.DataOffset), nil
}

// PrivateDataFor is the other half: the private data with which librpma's
// examples hand their memory region m to the other side, a struct
// common_data with dataOffset (where the data starts in m) and m's
// descriptor (rpma_mr_get_descriptor), CommonDataSize bytes. dataOffset
// must fit data_offset's 16 bits.
func PrivateDataFor(m *mr.Local, dataOffset int) ([]byte, error) {
	if dataOffset < 0 || dataOffset > math.MaxUint16 {
		return nil, fmt.Errorf("the data offset %d does not fit common_data: %w", dataOffset, ErrInvalid)
	}
	desc := m.Descriptor()
	return CommonData{DataOffset: uint16(dataOffset), MRDesc: desc[:]}.MarshalBinary()
}
