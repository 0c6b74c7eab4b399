package main

// GPSPM (General Purpose Server Persistency Method): the client writes a
// record with an RDMA write, then sends a flush request; the server
// persists the range itself (pmem.Region.Persist) and answers; the client
// acknowledges the record on the answer. The messages are plain
// little-endian words (the examples' 09 speaks librpma's protobuf format;
// here only the method matters):
//
//	request  (24 bytes): offset u64, length u64, tag u64 (round<<32 | seq)
//	response  (8 bytes): tag u64
//
// The server keeps a log on the NVDIMM, after the acknowledgement word:
// every range cpuflush wrote back (seen through cpuflush.Observe, so it is
// what was persisted, not what the server meant to do), and every response
// just before it is sent, in order. A fresh server reads it back and
// prints, per round, "PERSISTED round seq-ranges": the records answered
// after a write-back that covered them. With -skip-persist (the negative
// control) the server answers without persisting.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/cpuflush"
	"github.com/gorpma/rpma/internal/powerloss"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const (
	gpspmWindow       = 16 // requests in flight
	gpspmSlot         = 32 // bytes of one message slot
	gpspmRequestSize  = 24
	gpspmResponseSize = 8
	gpspmMsgSize      = 2 * gpspmWindow * gpspmSlot // request slots, then response slots
)

func requestSlot(i int) int  { return i * gpspmSlot }
func responseSlot(i int) int { return (gpspmWindow + i) * gpspmSlot }

// The log's entries: 16 bytes, the kind in the top 4 bits of the first
// word (written last: an entry counts once that word is set).
const (
	logEntrySize = 16
	logPersisted = 1 // length in the first word, offset in the second
	logAnswered  = 2 // round in the first word, seq in the second
	logKindShift = 60
)

// logOffset is where the GPSPM log starts: after the acknowledgement word.
func logOffset(rounds, perRound int) int { return ackOffset(rounds, perRound) + powerloss.RecordSize }

// logSize is the log's room: a write-back and an answer per record.
func logSize(rounds, perRound int) int { return rounds * perRound * 2 * logEntrySize }

// persistLog is the GPSPM server's log on the NVDIMM.
type persistLog struct {
	mem   []byte // the whole mapped region
	start int
	n     int // entries
}

// openLog finds the end of the log at start.
func openLog(mem []byte, start int) *persistLog {
	l := &persistLog{mem: mem, start: start}
	for l.start+(l.n+1)*logEntrySize <= len(mem) && binary.LittleEndian.Uint64(l.entry(l.n)) != 0 {
		l.n++
	}
	return l
}

func (l *persistLog) entry(i int) []byte {
	return l.mem[l.start+i*logEntrySize : l.start+(i+1)*logEntrySize]
}

// add appends an entry and writes it back.
func (l *persistLog) add(kind, a, b uint64) {
	if l.start+(l.n+1)*logEntrySize > len(l.mem) {
		fatal("plnode server: the GPSPM log is full")
	}
	e := l.entry(l.n)
	binary.LittleEndian.PutUint64(e[8:], b)
	binary.LittleEndian.PutUint64(e, kind<<logKindShift|a)
	cpuflush.Flush(e) // the observer ignores the log's own ranges
	l.n++
}

// observe logs a written-back range of the records' area.
func (l *persistLog) observe(b []byte) {
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(l.mem))))
	if off >= 0 && off < l.start {
		l.add(logPersisted, uint64(len(b)), uint64(off))
	}
}

// answeredPersisted returns, per round, the seqs answered after a
// write-back covering their record.
func (l *persistLog) answeredPersisted(rounds, perRound int) [][]uint32 {
	out := make([][]uint32, rounds)
	covered := map[int]bool{} // record index
	for i := 0; i < l.n; i++ {
		e := l.entry(i)
		w0, w1 := binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:])
		a := int(w0 & (1<<logKindShift - 1))
		switch w0 >> logKindShift {
		case logPersisted:
			off, n := int(w1), a
			for idx := (off + powerloss.RecordSize - 1) / powerloss.RecordSize; (idx+1)*powerloss.RecordSize <= off+n; idx++ {
				covered[idx] = true
			}
		case logAnswered:
			round, seq := a, int(w1)
			if round < rounds && covered[round*perRound+seq] {
				out[round] = append(out[round], uint32(seq))
			}
		}
	}
	return out
}

// acceptGPSPM accepts one connection with a receive posted in every
// request slot.
func acceptGPSPM(req func(*conn.Config) (*conn.ConnReq, error), msg *mr.Local, pdata []byte) (*conn.Conn, error) {
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.RQSize, cfg.CQSize = 2*gpspmWindow, gpspmWindow, 4*gpspmWindow
	r, err := req(cfg)
	if err != nil {
		return nil, err
	}
	for i := 0; i < gpspmWindow; i++ {
		if err := r.Recv(msg, requestSlot(i), gpspmRequestSize, uint64(i)); err != nil {
			return nil, err
		}
	}
	return r.Connect(pdata)
}

// serveGPSPM answers flush requests until the connection ends.
func serveGPSPM(c *conn.Conn, region *pmem.Region, msg *mr.Local, log *persistLog, skipPersist bool) error {
	q := c.CQ()
	b := msg.Bytes()
	wcs := make([]cq.WC, 2*gpspmWindow)
	for {
		n, err := q.GetWC(wcs)
		if errors.Is(err, rpma.ErrNoCompletion) {
			if err := q.Wait(context.Background()); err != nil {
				return err // ends on the connection's end
			}
			continue
		}
		if err != nil {
			return err
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return err
			}
			if wc.Opcode != rpma.WCRecv {
				continue // a response's send
			}
			i := int(wc.OpContext)
			rq := b[requestSlot(i):]
			off, length := binary.LittleEndian.Uint64(rq), binary.LittleEndian.Uint64(rq[8:])
			tag := binary.LittleEndian.Uint64(rq[16:])
			if wc.ByteLen != gpspmRequestSize || off > uint64(log.start) || length > uint64(log.start)-off {
				return fmt.Errorf("bad flush request: %d bytes, [%d, +%d)", wc.ByteLen, off, length)
			}
			if !skipPersist {
				if err := region.Persist(int(off), int(length)); err != nil {
					return err
				}
			}
			log.add(logAnswered, tag>>32, tag&0xFFFF_FFFF)
			// The slot's next receive first: the client may send its next
			// request as soon as the response arrives.
			if err := c.Recv(msg, requestSlot(i), gpspmRequestSize, uint64(i)); err != nil {
				return err
			}
			binary.LittleEndian.PutUint64(b[responseSlot(i):], tag)
			if err := c.Send(msg, responseSlot(i), gpspmResponseSize, rpma.CompletionAlways, uint64(i)); err != nil {
				return err
			}
		}
	}
}

// gpspmRound writes round's records the GPSPM way, acknowledging each on
// its response, until perRound or the connection breaks.
func gpspmRound(c *conn.Conn, src *mr.Local, b []byte, msg *mr.Local, a *acker, round uint32, perRound int) error {
	rem, err := serverRegion(c)
	if err != nil {
		return err
	}
	a.rem, a.outstanding = rem, 0
	m := msg.Bytes()
	for i := 0; i < gpspmWindow; i++ {
		if err := c.Recv(msg, responseSlot(i), gpspmResponseSize, uint64(i)<<2|wrRecord); err != nil {
			return err
		}
	}
	q := c.CQ()
	wcs := make([]cq.WC, 32)
	inflight, next := 0, 0
	for next < perRound || inflight > 0 || a.outstanding > 0 {
		for inflight < gpspmWindow && next < perRound {
			off := next * powerloss.RecordSize
			seq := uint32(next)
			powerloss.Record{Round: round, Seq: seq}.Put(b[off:])
			dst := powerloss.Offset(round, seq, perRound)
			if err := c.Write(rem, dst, src, off, powerloss.RecordSize, rpma.CompletionAlways, uint64(seq)<<2|wrWrite); err != nil {
				return err
			}
			// The request's slot is free: its previous request was answered.
			i := next % gpspmWindow
			rq := m[requestSlot(i):]
			binary.LittleEndian.PutUint64(rq, uint64(dst))
			binary.LittleEndian.PutUint64(rq[8:], powerloss.RecordSize)
			binary.LittleEndian.PutUint64(rq[16:], uint64(round)<<32|uint64(seq))
			if err := c.Send(msg, requestSlot(i), gpspmRequestSize, rpma.CompletionAlways, uint64(seq)<<2|wrWrite); err != nil {
				return err
			}
			inflight++
			next++
		}
		n, err := nextWCs(q, wcs)
		if err != nil {
			return err
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return err
			}
			switch {
			case wc.OpContext&3 == wrAck:
				a.outstanding--
			case wc.Opcode == rpma.WCRecv:
				i := int(wc.OpContext >> 2)
				tag := binary.LittleEndian.Uint64(m[responseSlot(i):])
				if wc.ByteLen != gpspmResponseSize || uint32(tag>>32) != round {
					return fmt.Errorf("bad flush response: %d bytes, tag %#x", wc.ByteLen, tag)
				}
				inflight--
				if err := a.ack(round, uint32(tag)); err != nil {
					return err
				}
				if err := c.Recv(msg, responseSlot(i), gpspmResponseSize, wc.OpContext); err != nil {
					return err
				}
			}
		}
	}
	fmt.Printf("DONE %d\n", round)
	if exitWhenDone {
		return errDone
	}
	return probeUntilBroken(c, rem, powerloss.Offset(round, 0, perRound), uint64(perRound))
}
