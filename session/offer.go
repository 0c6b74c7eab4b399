package session

import (
	"encoding/binary"

	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
)

// Sizes of the [Offer] layout, librpma's struct common_data.
const (
	// OfferSize is sizeof(struct common_data): 2 + 1 + 1 + 24 bytes.
	OfferSize = 28
	// DescriptorsMaxSize is the room for the descriptors
	// (DESCRIPTORS_MAX_SIZE), chosen so the layout fits the 56 bytes of
	// private data a connect may carry.
	DescriptorsMaxSize = 24
)

// Offer is the private data with which one side hands a memory region,
// and optionally its peer configuration, to the other: the layout of
// librpma's examples (struct common_data, little-endian):
//
//	off size field
//	  0    2 data_offset    where the data starts in the region
//	  2    1 mr_desc_size   bytes of region descriptor (21, or 0 for none)
//	  3    1 pcfg_desc_size bytes of peer-configuration descriptor (1 or 0)
//	  4   24 descriptors    the region's descriptor, then the peer
//	                        configuration's, then zeros
//
// Received private data is padded by rdma_cm: only the first OfferSize
// bytes count.
type Offer struct {
	// DataOffset is data_offset: where the data starts in the region
	// (librpma's examples put a signature before it in persistent
	// memory); 0 from Accept.
	DataOffset uint16
	// MRDesc is the region's descriptor (mr.Local.Descriptor), empty for
	// no region.
	MRDesc []byte
	// PeerCfgDesc is the peer configuration's descriptor
	// (peer.Cfg.Descriptor), empty for none.
	PeerCfgDesc []byte
}

// OfferFor is the Offer of region m (nil: none) with pcfg.
func OfferFor(m *mr.Local, pcfg peer.Cfg) Offer {
	var o Offer
	if m != nil {
		d := m.Descriptor()
		o.MRDesc = d[:]
	}
	pd := pcfg.Descriptor()
	o.PeerCfgDesc = pd[:]
	return o
}

// MarshalBinary encodes o in OfferSize bytes, unused descriptor bytes zero.
// Descriptors longer than DescriptorsMaxSize together are an error matching
// rpma.ErrInvalidArgument.
func (o Offer) MarshalBinary() ([]byte, error) {
	if n := len(o.MRDesc) + len(o.PeerCfgDesc); n > DescriptorsMaxSize {
		return nil, rpmaerr.Inval("session_offer", "descriptors of %d + %d bytes exceed %d", len(o.MRDesc), len(o.PeerCfgDesc), DescriptorsMaxSize)
	}
	b := make([]byte, OfferSize)
	binary.LittleEndian.PutUint16(b[0:], o.DataOffset)
	b[2] = byte(len(o.MRDesc))
	b[3] = byte(len(o.PeerCfgDesc))
	n := copy(b[4:], o.MRDesc)
	copy(b[4+n:], o.PeerCfgDesc)
	return b, nil
}

// UnmarshalBinary decodes received private data (at least OfferSize
// bytes; more are ignored) into o, copying the descriptors. Short data,
// or descriptor sizes beyond DescriptorsMaxSize, are errors matching
// rpma.ErrInvalidArgument. The descriptors themselves are checked when
// decoded ([Offer.Remote], [Offer.PeerCfg]).
func (o *Offer) UnmarshalBinary(b []byte) error {
	if len(b) < OfferSize {
		return rpmaerr.Inval("session_offer", "private data of %d bytes, need %d", len(b), OfferSize)
	}
	mrn, pcn := int(b[2]), int(b[3])
	if mrn+pcn > DescriptorsMaxSize {
		return rpmaerr.Inval("session_offer", "descriptor sizes %d + %d exceed %d", mrn, pcn, DescriptorsMaxSize)
	}
	desc := b[4 : 4+DescriptorsMaxSize]
	*o = Offer{
		DataOffset:  binary.LittleEndian.Uint16(b[0:]),
		MRDesc:      append([]byte(nil), desc[:mrn]...),
		PeerCfgDesc: append([]byte(nil), desc[mrn:mrn+pcn]...),
	}
	return nil
}

// Remote decodes the offered region, nil (and no error) when none was
// offered.
func (o Offer) Remote() (*mr.Remote, error) {
	if len(o.MRDesc) == 0 {
		return nil, nil
	}
	return mr.RemoteFromDescriptor(o.MRDesc)
}

// PeerCfg decodes the offered peer configuration; without one it is the
// zero Cfg (librpma's default: no direct write to persistent memory).
func (o Offer) PeerCfg() (peer.Cfg, error) {
	if len(o.PeerCfgDesc) == 0 {
		return peer.Cfg{}, nil
	}
	return peer.CfgFromDescriptor(o.PeerCfgDesc)
}
