package main

import (
	"encoding/binary"
	"fmt"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
)

// The private data of the handshake. The client says in its connect's
// private data (hello) what one connection needs; the server registers a
// region that large for the connection and lends it in the accept's
// private data (offer), with its peer configuration.

var magic = [4]byte{'R', 'P', 'R', 'F'}

const (
	version   = 1
	helloSize = 24
	offerSize = 6 + mr.ExtendedDescriptorSize
)

// hello is the client's private data.
type hello struct {
	conns      int // connections of the client's run (the server's session)
	lanes      int // operations in flight on this connection
	maxMsg     int // largest message sent (0: no sends, nothing to receive)
	regionSize int // bytes of the region the client reads and writes
}

func (h hello) marshal() []byte {
	b := make([]byte, helloSize)
	copy(b, magic[:])
	b[4] = version
	binary.LittleEndian.PutUint16(b[6:], uint16(h.conns))
	binary.LittleEndian.PutUint32(b[8:], uint32(h.lanes))
	binary.LittleEndian.PutUint32(b[12:], uint32(h.maxMsg))
	binary.LittleEndian.PutUint64(b[16:], uint64(h.regionSize))
	return b
}

func parseHello(b []byte) (hello, error) {
	if len(b) < helloSize || [4]byte(b[:4]) != magic || b[4] != version {
		return hello{}, fmt.Errorf("not an rpmaperf client (private data %q)", b[:min(len(b), 8)])
	}
	h := hello{
		conns:      int(binary.LittleEndian.Uint16(b[6:])),
		lanes:      int(binary.LittleEndian.Uint32(b[8:])),
		maxMsg:     int(binary.LittleEndian.Uint32(b[12:])),
		regionSize: int(min(binary.LittleEndian.Uint64(b[16:]), maxRegion+1)),
	}
	switch {
	case h.conns < 1:
		return h, fmt.Errorf("hello: %d connections", h.conns)
	case h.lanes < 1 || h.lanes > maxLanes:
		return h, fmt.Errorf("hello: %d operations in flight, want 1 to %d", h.lanes, maxLanes)
	case h.maxMsg < 0 || h.maxMsg > maxSize:
		return h, fmt.Errorf("hello: message size %d, want at most %d", h.maxMsg, maxSize)
	case h.regionSize < 1 || h.regionSize > maxRegion:
		return h, fmt.Errorf("hello: region of %d bytes, want at most %d", h.regionSize, maxRegion)
	}
	return h, nil
}

// offer is the server's private data: its region and peer configuration.
type offer struct {
	region [mr.ExtendedDescriptorSize]byte
	cfg    [peer.CfgDescriptorSize]byte
}

func (o offer) marshal() []byte {
	b := make([]byte, offerSize)
	copy(b, magic[:])
	b[4] = version
	copy(b[5:], o.cfg[:])
	copy(b[6:], o.region[:])
	return b
}

func parseOffer(b []byte) (*mr.Remote, peer.Cfg, error) {
	if len(b) < offerSize || [4]byte(b[:4]) != magic || b[4] != version {
		return nil, peer.Cfg{}, fmt.Errorf("the server is not an rpmaperf server (private data %q)", b[:min(len(b), 8)])
	}
	pcfg, err := peer.CfgFromDescriptor(b[5:6])
	if err != nil {
		return nil, pcfg, fmt.Errorf("peer.CfgFromDescriptor: %w", err)
	}
	remote, err := mr.RemoteFromExtendedDescriptor(b[6:offerSize])
	if err != nil {
		return nil, pcfg, fmt.Errorf("mr.RemoteFromExtendedDescriptor: %w", err)
	}
	return remote, pcfg, nil
}

// layout places each lane's slots in the regions of one connection, the
// same on both sides: the server's region is [read area][write area]
// [atomic words], the client's [source area][destination area][results].
// Lane i owns slot i of each area, so no two operations in flight touch
// the same bytes.
type layout struct {
	lanes int
	slot  int // bytes per lane and area: the largest size, 64-byte aligned
	area  int // lanes × slot
	size  int // the whole region
}

func newLayout(lanes, maxSize int) layout {
	slot := roundUp(maxSize, 64)
	area := lanes * slot
	return layout{lanes: lanes, slot: slot, area: area, size: roundUp(2*area+lanes*atomicSize, 4096)}
}

func (l layout) first(lane int) int  { return lane * l.slot }              // read area, source area
func (l layout) second(lane int) int { return l.area + lane*l.slot }       // write area, destination area
func (l layout) word(lane int) int   { return 2*l.area + lane*atomicSize } // atomic words, results

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// readByte is the byte the server puts at offset off of its region, which
// reads find.
func readByte(off int) byte { return byte(off ^ off>>8 ^ 0x5a) }

// writeByte is the byte at offset off of a message of a run with seed:
// what writes put and sends carry.
func writeByte(seed, off int) byte { return byte(seed + off*7 + off>>9) }
