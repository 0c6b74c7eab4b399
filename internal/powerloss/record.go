package powerloss

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
)

// RecordSize is the size of one record on persistent memory: one cache
// line, so a record is never torn across lines.
const RecordSize = 64

// recordMagic marks a written record ("RPMAREC1" little-endian).
const recordMagic = 0x3143_4552_414d_5052

var crcTable = crc64.MakeTable(crc64.ECMA)

// Record is one numbered record. Layout (little-endian): magic u64,
// round u32, seq u32, 40 bytes of payload derived from round and seq,
// crc64 of the first 56 bytes.
type Record struct {
	Round uint32
	Seq   uint32
}

// Offset is where record seq of round lives in a region laid out as rounds
// of perRound records each.
func Offset(round, seq uint32, perRound int) int {
	return (int(round)*perRound + int(seq)) * RecordSize
}

// Put writes r into b[:RecordSize].
func (r Record) Put(b []byte) {
	_ = b[RecordSize-1]
	binary.LittleEndian.PutUint64(b[0:], recordMagic)
	binary.LittleEndian.PutUint32(b[8:], r.Round)
	binary.LittleEndian.PutUint32(b[12:], r.Seq)
	for i := 16; i < 56; i++ {
		b[i] = byte(uint32(i)*31 + r.Round*7 + r.Seq)
	}
	binary.LittleEndian.PutUint64(b[56:], crc64.Checksum(b[:56], crcTable))
}

// ErrNoRecord means the bytes hold no valid record (never written, or torn).
var ErrNoRecord = errors.New("powerloss: no valid record")

// Parse reads a record from b[:RecordSize].
func Parse(b []byte) (Record, error) {
	_ = b[RecordSize-1]
	if binary.LittleEndian.Uint64(b[0:]) != recordMagic {
		return Record{}, ErrNoRecord
	}
	if binary.LittleEndian.Uint64(b[56:]) != crc64.Checksum(b[:56], crcTable) {
		return Record{}, ErrNoRecord
	}
	return Record{Round: binary.LittleEndian.Uint32(b[8:]), Seq: binary.LittleEndian.Uint32(b[12:])}, nil
}

// AckSize is the size of an acknowledgement the client writes to the
// server (the wire check): magic u64, round u32, seq u32.
const AckSize = 16

// ackMagic marks an acknowledgement ("RPMAACK1" little-endian).
const ackMagic = 0x314b_4341_414d_5052

// PutAck writes the acknowledgement of record r into b[:AckSize].
func (r Record) PutAck(b []byte) {
	_ = b[AckSize-1]
	binary.LittleEndian.PutUint64(b[0:], ackMagic)
	binary.LittleEndian.PutUint32(b[8:], r.Round)
	binary.LittleEndian.PutUint32(b[12:], r.Seq)
}

// ParseAck reads an acknowledgement from b, which must be exactly
// AckSize bytes.
func ParseAck(b []byte) (Record, bool) {
	if len(b) != AckSize || binary.LittleEndian.Uint64(b) != ackMagic {
		return Record{}, false
	}
	return Record{Round: binary.LittleEndian.Uint32(b[8:]), Seq: binary.LittleEndian.Uint32(b[12:])}, true
}
