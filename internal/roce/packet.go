package roce

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// UDPPort is the RoCEv2 destination port.
const UDPPort = 4791

// Opcode is a BTH opcode. The names are the specification's for the
// reliable-connected service (the top three bits 000).
type Opcode uint8

// The RC opcodes.
const (
	SendFirst          Opcode = 0x00
	SendMiddle         Opcode = 0x01
	SendLast           Opcode = 0x02
	SendLastImm        Opcode = 0x03
	SendOnly           Opcode = 0x04
	SendOnlyImm        Opcode = 0x05
	WriteFirst         Opcode = 0x06
	WriteMiddle        Opcode = 0x07
	WriteLast          Opcode = 0x08
	WriteLastImm       Opcode = 0x09
	WriteOnly          Opcode = 0x0A
	WriteOnlyImm       Opcode = 0x0B
	ReadRequest        Opcode = 0x0C
	ReadResponseFirst  Opcode = 0x0D
	ReadResponseMiddle Opcode = 0x0E
	ReadResponseLast   Opcode = 0x0F
	ReadResponseOnly   Opcode = 0x10
	Acknowledge        Opcode = 0x11
	AtomicAcknowledge  Opcode = 0x12
	CompareSwap        Opcode = 0x13
	FetchAdd           Opcode = 0x14
	SendLastInvalidate Opcode = 0x16
	SendOnlyInvalidate Opcode = 0x17
	Flush              Opcode = 0x1C
	AtomicWrite        Opcode = 0x1D
)

// Header sizes and fields.
const (
	rcServiceMask    = 0xE0 // the opcode's service bits; RC is 000
	bthSize          = 12
	rethSize         = 16
	aethSize         = 4
	immSize          = 4
	iethSize         = 4
	fethSize         = 4
	atomicETHSize    = 28
	atomicAckETHSize = 8
	icrcSize         = 4
	ethHeaderSize    = 14
	udpHeaderSize    = 8
	ipv4EtherType    = 0x0800
	ipProtoUDP       = 17
	destQPMask       = 0x00FF_FFFF
	psnMask          = 0x00FF_FFFF
	ackRequestBit    = 0x80
	padCountShift    = 4
	padCountMask     = 0x3
)

// IsReadResponse reports whether op is one of the four RDMA READ response
// opcodes.
func (op Opcode) IsReadResponse() bool { return op >= ReadResponseFirst && op <= ReadResponseOnly }

// Packet is one decoded RoCEv2 packet.
type Packet struct {
	Opcode Opcode
	DestQP uint32 // the destination QP number (24 bits)
	PSN    uint32 // the packet sequence number (24 bits)
	AckReq bool   // the requester asks for an acknowledgement
	// The RDMA extended header, on WriteFirst, WriteOnly, WriteOnlyImm,
	// ReadRequest, Flush and AtomicWrite.
	HasRETH bool
	VA      uint64
	RKey    uint32
	DMALen  uint32
	// Payload is what follows the extension headers, without the pad
	// bytes and the invariant CRC. It aliases the frame.
	Payload []byte
}

// ErrNotRoCE is returned by ParseFrame for a frame that is not IPv4/UDP
// to port 4791.
var ErrNotRoCE = errors.New("roce: not a RoCEv2 packet")

// ParseFrame decodes an Ethernet frame that carries a RoCEv2 packet over
// IPv4. A frame of another kind gives ErrNotRoCE; a RoCEv2 frame too short
// for its headers gives another error.
func ParseFrame(frame []byte) (Packet, error) {
	if len(frame) < ethHeaderSize+20 || binary.BigEndian.Uint16(frame[12:]) != ipv4EtherType {
		return Packet{}, ErrNotRoCE
	}
	ip := frame[ethHeaderSize:]
	ihl := int(ip[0]&0x0F) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl+udpHeaderSize || ip[9] != ipProtoUDP {
		return Packet{}, ErrNotRoCE
	}
	udp := ip[ihl:]
	if binary.BigEndian.Uint16(udp[2:]) != UDPPort {
		return Packet{}, ErrNotRoCE
	}
	// The IP total length bounds the packet (an Ethernet frame may be
	// padded).
	if total := int(binary.BigEndian.Uint16(ip[2:])); total >= ihl+udpHeaderSize && total <= len(ip) {
		udp = ip[ihl:total]
	}
	return Parse(udp[udpHeaderSize:])
}

// Parse decodes a RoCEv2 packet from its BTH to its invariant CRC (the
// UDP payload).
func Parse(b []byte) (Packet, error) {
	if len(b) < bthSize+icrcSize {
		return Packet{}, fmt.Errorf("roce: %d bytes, shorter than a BTH and an ICRC", len(b))
	}
	p := Packet{
		Opcode: Opcode(b[0]),
		DestQP: binary.BigEndian.Uint32(b[4:]) & destQPMask,
		PSN:    binary.BigEndian.Uint32(b[8:]) & psnMask,
		AckReq: b[8]&ackRequestBit != 0,
	}
	pad := int(b[1]>>padCountShift) & padCountMask
	rest := b[bthSize:]
	ext, hasRETH := extensionSize(p.Opcode)
	p.HasRETH = hasRETH
	if len(rest) < ext+pad+icrcSize {
		return Packet{}, fmt.Errorf("roce: opcode %#x: %d bytes after the BTH, shorter than its headers", p.Opcode, len(rest))
	}
	if p.HasRETH {
		reth := rest[ext-rethSize:]
		if p.Opcode == WriteOnlyImm {
			reth = rest[:rethSize]
		}
		p.VA = binary.BigEndian.Uint64(reth)
		p.RKey = binary.BigEndian.Uint32(reth[8:])
		p.DMALen = binary.BigEndian.Uint32(reth[12:])
	}
	p.Payload = rest[ext : len(rest)-pad-icrcSize]
	return p, nil
}

// extensionSize returns the bytes of extension headers between the BTH
// and the payload for op, and whether they include a RETH.
func extensionSize(op Opcode) (int, bool) {
	if op&rcServiceMask != 0 {
		return 0, false
	}
	switch op {
	case WriteFirst, WriteOnly, ReadRequest, AtomicWrite:
		return rethSize, true
	case WriteOnlyImm:
		return rethSize + immSize, true
	case Flush:
		return fethSize + rethSize, true
	case SendLastImm, SendOnlyImm, WriteLastImm:
		return immSize, false
	case SendLastInvalidate, SendOnlyInvalidate:
		return iethSize, false
	case ReadResponseFirst, ReadResponseLast, ReadResponseOnly, Acknowledge:
		return aethSize, false
	case AtomicAcknowledge:
		return aethSize + atomicAckETHSize, false
	case CompareSwap, FetchAdd:
		return atomicETHSize, false
	}
	return 0, false
}

// Frame encodes p as an Ethernet frame (IPv4, UDP to port 4791), for
// tests that need packets: the extension headers other than the RETH and
// the ICRC are zeros, the addresses are unset.
func (p Packet) Frame() []byte {
	ext, hasRETH := extensionSize(p.Opcode)
	pad := (4 - len(p.Payload)%4) % 4
	n := bthSize + ext + len(p.Payload) + pad + icrcSize
	b := make([]byte, ethHeaderSize+20+udpHeaderSize+n)
	binary.BigEndian.PutUint16(b[12:], ipv4EtherType)
	ip := b[ethHeaderSize:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	ip[9] = ipProtoUDP
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[2:], UDPPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	bth := udp[udpHeaderSize:]
	bth[0] = byte(p.Opcode)
	bth[1] = byte(pad << padCountShift)
	binary.BigEndian.PutUint32(bth[4:], p.DestQP&destQPMask)
	binary.BigEndian.PutUint32(bth[8:], p.PSN&psnMask)
	if p.AckReq {
		bth[8] |= ackRequestBit
	}
	if hasRETH {
		reth := bth[bthSize+ext-rethSize:]
		if p.Opcode == WriteOnlyImm {
			reth = bth[bthSize:]
		}
		binary.BigEndian.PutUint64(reth, p.VA)
		binary.BigEndian.PutUint32(reth[8:], p.RKey)
		binary.BigEndian.PutUint32(reth[12:], p.DMALen)
	}
	copy(bth[bthSize+ext:], p.Payload)
	return b
}

// PSNAfter reports whether PSN a comes after b in the 24-bit sequence
// space (serial number arithmetic: a is at most 2^23 - 1 ahead).
func PSNAfter(a, b uint32) bool {
	d := (a - b) & psnMask
	return d != 0 && d < 1<<23
}
