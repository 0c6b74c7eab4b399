// Package record is the record format of example durable-log: fixed
// 64-byte slots, each a text line and a CRC-32C of it, so that the server
// can count whole records and tell a torn or foreign one.
package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

const (
	// Size is the size of a record and of its slot.
	Size = 64
	// LogSize is the size of the log region: 1 MiB, what make demo's
	// FsDAX files hold.
	LogSize = 1 << 20
	// Slots is how many records the log holds.
	Slots = LogSize / Size
)

var table = crc32.MakeTable(crc32.Castagnoli)

// Encode writes the record of slot, appended by goroutine g as its i-th,
// into b (Size bytes).
func Encode(b []byte, slot, g, i int) {
	clear(b[:Size])
	copy(b, fmt.Sprintf("slot %06d goroutine %03d record %05d\n", slot, g, i))
	binary.LittleEndian.PutUint32(b[Size-4:], crc32.Checksum(b[:Size-4], table))
}

// Valid reports whether b holds a whole record.
func Valid(b []byte) bool {
	if len(b) < Size || b[0] == 0 {
		return false
	}
	return binary.LittleEndian.Uint32(b[Size-4:]) == crc32.Checksum(b[:Size-4], table)
}

// Count returns how many slots of log hold whole records.
func Count(log []byte) int {
	n := 0
	for off := 0; off+Size <= len(log); off += Size {
		if Valid(log[off : off+Size]) {
			n++
		}
	}
	return n
}
