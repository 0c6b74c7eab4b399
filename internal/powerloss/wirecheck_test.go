package powerloss

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/roce"
)

const serverQP, clientQP = 0x20, 0x30

func recordWrite(round, seq, psn uint32) Sent {
	b := make([]byte, RecordSize)
	Record{Round: round, Seq: seq}.Put(b)
	return Sent{FromClient: true, Frame: roce.Packet{Opcode: roce.WriteOnly, DestQP: serverQP, PSN: psn, HasRETH: true, DMALen: RecordSize, Payload: b}.Frame()}
}

func ackWrite(round, seq, psn uint32) Sent {
	b := make([]byte, AckSize)
	Record{Round: round, Seq: seq}.PutAck(b)
	return Sent{FromClient: true, Frame: roce.Packet{Opcode: roce.WriteOnly, DestQP: serverQP, PSN: psn, HasRETH: true, DMALen: AckSize, Payload: b}.Frame()}
}

func readRequest(psn uint32) Sent {
	return Sent{FromClient: true, Frame: roce.Packet{Opcode: roce.ReadRequest, DestQP: serverQP, PSN: psn, HasRETH: true, DMALen: 8}.Frame()}
}

func readResponse(psn uint32) Sent {
	return Sent{Frame: roce.Packet{Opcode: roce.ReadResponseOnly, DestQP: clientQP, PSN: psn, Payload: make([]byte, 8)}.Frame()}
}

func TestCheckFlushOrder(t *testing.T) {
	cm := Sent{FromClient: true, Frame: roce.Packet{Opcode: roce.SendOnly, DestQP: 1, PSN: 0, Payload: make([]byte, 256)}.Frame()}
	r, err := CheckFlushOrder([]Sent{
		cm,
		recordWrite(0, 0, 0xFFFFFE),
		readRequest(0xFFFFFF),
		ackWrite(0, 0, 0), // before the response: too early
		readResponse(0xFFFFFF),
		ackWrite(0, 0, 1), // covered (across the PSN wrap)
		recordWrite(0, 1, 2),
		ackWrite(0, 1, 3), // the last response is before its write
		ackWrite(0, 7, 4), // never written
		readRequest(5),
		readResponse(5),
		ackWrite(0, 1, 6), // covered
	})
	require.NoError(t, err)
	require.Equal(t, 2, r.Records)
	require.Equal(t, 2, r.ReadResponses)
	require.Equal(t, 5, r.Acks)
	require.Equal(t, 2, r.Covered)
	require.Equal(t, 3, r.Violations)
	require.Len(t, r.Examples, 3)
	require.Contains(t, r.Examples[0], "record 0/0")
	require.Contains(t, r.Examples[1], "record 0/1")
	require.Contains(t, r.Examples[2], "never written")

	_, err = CheckFlushOrder([]Sent{recordWrite(0, 0, 1), {FromClient: true, Frame: roce.Packet{Opcode: roce.WriteOnly, DestQP: serverQP + 1, PSN: 2, HasRETH: true}.Frame()}})
	require.ErrorContains(t, err, "more than one connection")
}
