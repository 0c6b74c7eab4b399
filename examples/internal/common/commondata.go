package common

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Sizes of struct common_data (librpma examples/common/common-conn.h) and of
// the descriptors it carries (librpma src/mr.c, src/peer_cfg.c).
const (
	// CommonDataSize is sizeof(struct common_data): 2 + 1 + 1 + 24, no
	// padding (alignment 2).
	CommonDataSize = 28
	// DescriptorsMaxSize mirrors DESCRIPTORS_MAX_SIZE: the room for the
	// descriptors, chosen so the struct fits the 56 bytes of private data
	// rdma_connect allows (RDMA_PS_TCP).
	DescriptorsMaxSize = 24
	// MRDescriptorSize is RPMA_MR_DESC_SIZE, what
	// rpma_mr_get_descriptor_size always returns.
	MRDescriptorSize = 21
	// PeerCfgDescriptorSize is what rpma_peer_cfg_get_descriptor_size always
	// returns.
	PeerCfgDescriptorSize = 1
)

// Byte offsets inside struct common_data.
const (
	commonDataOffsetOff   = 0 // uint16_t data_offset, host (little-endian) order
	commonMRDescSizeOff   = 2 // uint8_t mr_desc_size
	commonPcfgDescSizeOff = 3 // uint8_t pcfg_desc_size
	commonDescriptorsOff  = 4 // char descriptors[24]
)

// ErrShortBuffer is returned (wrapped) when a buffer is shorter than the
// layout it should hold.
var ErrShortBuffer = errors.New("buffer too short")

// ErrInvalid is returned (wrapped) for values a layout cannot hold or that
// are inconsistent.
var ErrInvalid = errors.New("invalid value")

// CommonData is struct common_data, the private data with which most
// examples hand a memory region (and 05 also a peer configuration) to the
// other side:
//
//	off size field
//	  0    2 data_offset    u16, little-endian: where the user data starts
//	                        in the described memory region
//	  2    1 mr_desc_size   u8: bytes of MR descriptor at descriptors[0]
//	  3    1 pcfg_desc_size u8: bytes of peer-cfg descriptor right after it
//	  4   24 descriptors    MR descriptor, then peer-cfg descriptor, then
//	                        zeros (the C senders zero the struct first)
//
// The C examples always send exactly CommonDataSize bytes; a receiver may get
// more (rdma_cm can pad private data) and only checks len >= 28.
type CommonData struct {
	// DataOffset is data_offset.
	DataOffset uint16
	// MRDesc is the memory region descriptor (rpma_mr_get_descriptor,
	// MRDescriptorSize bytes in librpma).
	MRDesc []byte
	// PeerCfgDesc is the peer configuration descriptor
	// (rpma_peer_cfg_get_descriptor, PeerCfgDescriptorSize byte), present
	// only in 05's server private data; empty elsewhere.
	PeerCfgDesc []byte
}

// MarshalBinary encodes d as the CommonDataSize bytes a C example would send:
// unused descriptor bytes are zero. The two descriptors must fit
// DescriptorsMaxSize together.
func (d CommonData) MarshalBinary() ([]byte, error) {
	if n := len(d.MRDesc) + len(d.PeerCfgDesc); n > DescriptorsMaxSize {
		return nil, fmt.Errorf("common_data: descriptors too big (%d + %d > %d): %w",
			len(d.MRDesc), len(d.PeerCfgDesc), DescriptorsMaxSize, ErrInvalid)
	}
	b := make([]byte, CommonDataSize)
	binary.LittleEndian.PutUint16(b[commonDataOffsetOff:], d.DataOffset)
	b[commonMRDescSizeOff] = byte(len(d.MRDesc))
	b[commonPcfgDescSizeOff] = byte(len(d.PeerCfgDesc))
	n := copy(b[commonDescriptorsOff:], d.MRDesc)
	copy(b[commonDescriptorsOff+n:], d.PeerCfgDesc)
	return b, nil
}

// UnmarshalBinary decodes struct common_data from received private data. It
// needs at least CommonDataSize bytes (extra bytes are ignored) and
// mr_desc_size + pcfg_desc_size <= DescriptorsMaxSize. The descriptors are
// copied. It does not check the descriptors themselves: the library does
// when they are used (a short MR descriptor is RPMA_E_INVAL there).
func (d *CommonData) UnmarshalBinary(b []byte) error {
	if len(b) < CommonDataSize {
		return fmt.Errorf("common_data: private data too small (%d < %d): %w",
			len(b), CommonDataSize, ErrShortBuffer)
	}
	mr := int(b[commonMRDescSizeOff])
	pcfg := int(b[commonPcfgDescSizeOff])
	if mr+pcfg > DescriptorsMaxSize {
		return fmt.Errorf("common_data: descriptor sizes %d + %d exceed %d: %w",
			mr, pcfg, DescriptorsMaxSize, ErrInvalid)
	}
	desc := b[commonDescriptorsOff : commonDescriptorsOff+DescriptorsMaxSize]
	*d = CommonData{
		DataOffset:  binary.LittleEndian.Uint16(b[commonDataOffsetOff:]),
		MRDesc:      append([]byte(nil), desc[:mr]...),
		PeerCfgDesc: append([]byte(nil), desc[mr:mr+pcfg]...),
	}
	return nil
}

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
