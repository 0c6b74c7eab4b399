package powerloss

import (
	"errors"
	"fmt"

	"github.com/gorpma/rpma/internal/roce"
)

// Sent is one frame of a captured wire: the guest's Ethernet frame and
// whether the client sent it.
type Sent struct {
	FromClient bool
	Frame      []byte
}

// FlushOrder is what CheckFlushOrder found on a wire.
type FlushOrder struct {
	Records       int      // record writes seen (resends included)
	ReadResponses int      // first or only READ responses the server sent
	Acks          int      // acknowledgements the client sent the server
	Covered       int      // acknowledgements a flush covered in time
	Violations    int      // acknowledgements no flush covered in time
	Examples      []string // the first few violations, described
}

// maxExamples is how many violations FlushOrder describes.
const maxExamples = 5

// CheckFlushOrder checks, over the frames of one connection in the order
// they left their VMs, that every acknowledgement the client wrote to the
// server was preceded by a flush covering its record: an RDMA READ
// response from the server whose request comes after the record's write
// in the connection's packet sequence (a READ is answered only once the
// writes before it on the connection are placed: it is the emulated
// flush). Comparing the response's departure with the acknowledgement's
// is the strictest order the wire can show: the client cannot have seen
// the response before the server sent it.
//
// Records are the RecordSize-byte writes Parse accepts; acknowledgements
// are the AckSize-byte writes ParseAck accepts. Packets to QP 1 (rdma_cm's
// connection management) are skipped; a second connection is an error.
func CheckFlushOrder(sent []Sent) (FlushOrder, error) {
	var r FlushOrder
	var qps [2]uint32 // the destination QP of each direction: [server's, client's]
	written := map[Record]uint32{}
	var flushed uint32 // the latest PSN a READ response carried
	haveFlushed := false
	for i, s := range sent {
		p, err := roce.ParseFrame(s.Frame)
		if errors.Is(err, roce.ErrNotRoCE) {
			continue // ARP and other non-RDMA traffic
		}
		if err != nil {
			return r, fmt.Errorf("frame %d: %w", i, err)
		}
		if p.DestQP == 1 {
			continue
		}
		dir := 0
		if !s.FromClient {
			dir = 1
		}
		switch qps[dir] {
		case 0:
			qps[dir] = p.DestQP
		case p.DestQP:
		default:
			return r, fmt.Errorf("frame %d: QP %#x after QP %#x: more than one connection", i, p.DestQP, qps[dir])
		}
		switch {
		case s.FromClient && p.Opcode == roce.WriteOnly && len(p.Payload) == RecordSize:
			if rec, err := Parse(p.Payload); err == nil {
				written[rec] = p.PSN
				r.Records++
			}
		case s.FromClient && p.Opcode == roce.WriteOnly:
			rec, ok := ParseAck(p.Payload)
			if !ok {
				continue
			}
			r.Acks++
			psn, ok := written[rec]
			switch {
			case !ok:
				r.violation(fmt.Sprintf("record %d/%d acknowledged (frame %d), never written", rec.Round, rec.Seq, i))
			case !haveFlushed || !roce.PSNAfter(flushed, psn):
				r.violation(fmt.Sprintf("record %d/%d (write PSN %#x) acknowledged (frame %d) before any READ response after it", rec.Round, rec.Seq, psn, i))
			default:
				r.Covered++
			}
		case !s.FromClient && (p.Opcode == roce.ReadResponseOnly || p.Opcode == roce.ReadResponseFirst):
			r.ReadResponses++
			if !haveFlushed || roce.PSNAfter(p.PSN, flushed) {
				flushed, haveFlushed = p.PSN, true
			}
		}
	}
	return r, nil
}

func (r *FlushOrder) violation(s string) {
	r.Violations++
	if len(r.Examples) < maxExamples {
		r.Examples = append(r.Examples, s)
	}
}
