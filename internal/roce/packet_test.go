package roce

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// frame builds an Ethernet/IPv4/UDP frame around a RoCEv2 packet: BTH,
// ext, payload, pad bytes and a 4-byte ICRC, with trail bytes of
// Ethernet padding after the IP packet.
func frame(op Opcode, qp, psn uint32, ackReq bool, ext, payload []byte, trail int) []byte {
	pad := (4 - len(payload)%4) % 4
	bth := make([]byte, bthSize)
	bth[0] = byte(op)
	bth[1] = byte(pad << padCountShift)
	binary.BigEndian.PutUint32(bth[4:], qp)
	binary.BigEndian.PutUint32(bth[8:], psn)
	if ackReq {
		bth[8] |= ackRequestBit
	}
	roce := append(append(append(bth, ext...), payload...), make([]byte, pad+icrcSize)...)
	udp := make([]byte, udpHeaderSize)
	binary.BigEndian.PutUint16(udp[0:], 49152)
	binary.BigEndian.PutUint16(udp[2:], UDPPort)
	ip := make([]byte, 20)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+udpHeaderSize+len(roce)))
	ip[9] = ipProtoUDP
	eth := make([]byte, ethHeaderSize)
	binary.BigEndian.PutUint16(eth[12:], ipv4EtherType)
	f := append(append(append(eth, ip...), udp...), roce...)
	return append(f, make([]byte, trail)...)
}

func reth(va uint64, rkey, n uint32) []byte {
	b := make([]byte, rethSize)
	binary.BigEndian.PutUint64(b, va)
	binary.BigEndian.PutUint32(b[8:], rkey)
	binary.BigEndian.PutUint32(b[12:], n)
	return b
}

func TestParseWriteOnly(t *testing.T) {
	payload := []byte("sixty-four bytes? no: twenty-one")[:21]
	p, err := ParseFrame(frame(WriteOnly, 0x123456, 0xABCDEF, true, reth(0x7f00_1234_5678, 0x42, 21), payload, 6))
	require.NoError(t, err)
	require.Equal(t, WriteOnly, p.Opcode)
	require.EqualValues(t, 0x123456, p.DestQP)
	require.EqualValues(t, 0xABCDEF, p.PSN)
	require.True(t, p.AckReq)
	require.True(t, p.HasRETH)
	require.EqualValues(t, 0x7f00_1234_5678, p.VA)
	require.EqualValues(t, 0x42, p.RKey)
	require.EqualValues(t, 21, p.DMALen)
	require.Equal(t, payload, p.Payload, "payload without pad, ICRC or Ethernet padding")
}

func TestParseWriteOnlyImm(t *testing.T) {
	ext := append(reth(0x1000, 7, 8), 0xde, 0xad, 0xbe, 0xef)
	p, err := ParseFrame(frame(WriteOnlyImm, 9, 1, false, ext, []byte("12345678"), 0))
	require.NoError(t, err)
	require.True(t, p.HasRETH)
	require.EqualValues(t, 0x1000, p.VA, "the RETH comes before the immediate data")
	require.Equal(t, []byte("12345678"), p.Payload)
}

func TestParseReadRequestAndResponse(t *testing.T) {
	req, err := ParseFrame(frame(ReadRequest, 17, 100, true, reth(0x2000, 3, 8), nil, 0))
	require.NoError(t, err)
	require.Equal(t, ReadRequest, req.Opcode)
	require.False(t, req.Opcode.IsReadResponse())
	require.EqualValues(t, 8, req.DMALen)
	require.Empty(t, req.Payload)

	resp, err := ParseFrame(frame(ReadResponseOnly, 18, 100, false, make([]byte, aethSize), []byte("01234567"), 0))
	require.NoError(t, err)
	require.True(t, resp.Opcode.IsReadResponse())
	require.False(t, resp.HasRETH)
	require.EqualValues(t, 100, resp.PSN)
	require.Equal(t, []byte("01234567"), resp.Payload)

	mid, err := ParseFrame(frame(ReadResponseMiddle, 18, 101, false, nil, make([]byte, 1024), 0))
	require.NoError(t, err)
	require.True(t, mid.Opcode.IsReadResponse())
	require.Len(t, mid.Payload, 1024, "a middle response has no AETH")
}

func TestParseRejects(t *testing.T) {
	f := frame(SendOnly, 1, 1, false, nil, []byte("x"), 0)
	tcp := append([]byte(nil), f...)
	tcp[ethHeaderSize+9] = 6
	_, err := ParseFrame(tcp)
	require.ErrorIs(t, err, ErrNotRoCE)

	other := append([]byte(nil), f...)
	binary.BigEndian.PutUint16(other[ethHeaderSize+20+2:], 4792)
	_, err = ParseFrame(other)
	require.ErrorIs(t, err, ErrNotRoCE)

	arp := append([]byte(nil), f...)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	_, err = ParseFrame(arp)
	require.ErrorIs(t, err, ErrNotRoCE)

	_, err = ParseFrame(f[:ethHeaderSize+10])
	require.ErrorIs(t, err, ErrNotRoCE)

	// A read request cut inside its RETH.
	short := frame(ReadRequest, 1, 1, false, reth(1, 1, 8), nil, 0)
	short = short[:len(short)-icrcSize-8]
	binary.BigEndian.PutUint16(short[ethHeaderSize+2:], uint16(len(short)-ethHeaderSize))
	_, err = ParseFrame(short)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNotRoCE)
}

func TestPSNAfter(t *testing.T) {
	require.True(t, PSNAfter(2, 1))
	require.False(t, PSNAfter(1, 2))
	require.False(t, PSNAfter(5, 5))
	require.True(t, PSNAfter(0, psnMask), "the sequence wraps at 2^24")
	require.True(t, PSNAfter(3, psnMask-3))
	require.False(t, PSNAfter(psnMask-3, 3))
}

func TestFrameRoundTrip(t *testing.T) {
	for _, p := range []Packet{
		{Opcode: WriteOnly, DestQP: 0x11, PSN: 0xFFFFFF, AckReq: true, HasRETH: true, VA: 1 << 40, RKey: 5, DMALen: 3, Payload: []byte("abc")},
		{Opcode: WriteOnlyImm, DestQP: 0x12, PSN: 7, HasRETH: true, VA: 64, RKey: 6, DMALen: 8, Payload: []byte("12345678")},
		{Opcode: Flush, DestQP: 0x13, PSN: 8, HasRETH: true, VA: 128, RKey: 7, DMALen: 64, Payload: []byte{}},
		{Opcode: ReadResponseOnly, DestQP: 0x14, PSN: 9, Payload: []byte("01234567")},
		{Opcode: SendOnly, DestQP: 0x15, PSN: 10, Payload: []byte("hello")},
	} {
		got, err := ParseFrame(p.Frame())
		require.NoError(t, err, "%#x", p.Opcode)
		require.Equal(t, p, got, "%#x", p.Opcode)
	}
}
