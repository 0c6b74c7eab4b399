package peer

import "github.com/gorpma/rpma/internal/rpmaerr"

// CfgDescriptorSize mirrors rpma_peer_cfg_get_descriptor_size: a peer
// configuration descriptor is always one byte.
const CfgDescriptorSize = 1

// Cfg mirrors struct rpma_peer_cfg: what a peer tells the other side about
// its platform. The zero value is librpma's default (rpma_peer_cfg_new).
//
// SECURITY WARNING (from librpma): descriptors travel unauthenticated, for
// example in connection private data; a forged one can downgrade the
// durability a client relies on. Exchange configuration over an
// authenticated channel (for example TLS) when that matters.
type Cfg struct {
	// DirectWriteToPMem declares that RDMA writes to this peer's
	// persistent memory land directly in the persistence domain (for
	// example Intel DDIO is off), so that a remote flush of type
	// rpma.FlushPersistent is meaningful. Default false.
	DirectWriteToPMem bool
}

// Descriptor mirrors rpma_peer_cfg_get_descriptor: the one-byte wire form
// of c, byte-compatible with librpma (0x01 when DirectWriteToPMem, else
// 0x00).
func (c Cfg) Descriptor() [CfgDescriptorSize]byte {
	if c.DirectWriteToPMem {
		return [CfgDescriptorSize]byte{1}
	}
	return [CfgDescriptorSize]byte{0}
}

// CfgFromDescriptor mirrors rpma_peer_cfg_from_descriptor: it decodes the
// descriptor at the start of desc. Any non-zero byte means
// DirectWriteToPMem; bytes after the first are ignored, as in librpma. An
// empty desc is an error matching [rpma.ErrInvalidArgument].
func CfgFromDescriptor(desc []byte) (Cfg, error) {
	if len(desc) < CfgDescriptorSize {
		return Cfg{}, rpmaerr.Inval("peer_cfg_from_descriptor",
			"descriptor of %d bytes, need %d", len(desc), CfgDescriptorSize)
	}
	return Cfg{DirectWriteToPMem: desc[0] != 0}, nil
}
