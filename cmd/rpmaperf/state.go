package main

import (
	"encoding/binary"
	"fmt"
)

// opState is one lane's: its quota, latencies and what its atomics saw.
// A lane has one operation in flight at a time.
type opState struct {
	lane  int
	quota int     // operations to do (0 with -duration)
	ops   int     // operations done
	lat   []int64 // nanoseconds, one per operation

	seq     uint64 // atomic-write: the last value written
	compare uint64 // cas: the value the word should hold
	last    uint64 // faa: the last old value
	primed  bool   // cas, faa: an operation has told the word's value
}

// nextWord is the next value an atomic write of the lane writes.
func (st *opState) nextWord() [atomicSize]byte {
	st.seq++
	var b [atomicSize]byte
	binary.NativeEndian.PutUint64(b[:], st.seq)
	return b
}

// casDone takes the old value a compare-and-swap returned. Only this lane
// touches its word, so once the value is known every swap must happen.
func (st *opState) casDone(old uint64, check bool) error {
	if check && st.primed && old != st.compare {
		return fmt.Errorf("cas on lane %d: the word held %d, want %d", st.lane, old, st.compare)
	}
	if old == st.compare {
		st.compare++
	} else {
		st.compare = old
	}
	st.primed = true
	return nil
}

// faaDone takes the old value a fetch-and-add of 1 returned.
func (st *opState) faaDone(old uint64, check bool) error {
	if check && st.primed && old != st.last+1 {
		return fmt.Errorf("faa on lane %d: the word held %d, want %d", st.lane, old, st.last+1)
	}
	st.last = old
	st.primed = true
	return nil
}
