package gpspm

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// Hand-computed encodings: proto2 fixed64 field n is the tag byte
// (n<<3 | wire type 1), then the value as 8 little-endian bytes. protobuf-c
// 1.4.1 (gpspm_flush_request__pack / gpspm_flush_response__pack, generated
// from librpma's .proto) packs exactly these bytes for these values.
var goldenRequests = []struct {
	offset, length, opContext uint64
	want                      []byte
}{
	{ // what the C 09 client sends with a PMem server: offset 17, length 1024, FLUSH_ID
		0x11, 0x400, 0xF01D,
		[]byte{
			0x09, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x11, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x19, 0x1d, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		},
	},
	{ // zero values are still sent: required fields
		0, 0, 0,
		[]byte{
			0x09, 0, 0, 0, 0, 0, 0, 0, 0,
			0x11, 0, 0, 0, 0, 0, 0, 0, 0,
			0x19, 0, 0, 0, 0, 0, 0, 0, 0,
		},
	},
	{
		0x0102030405060708, math.MaxUint64, 0x8000000000000001,
		[]byte{
			0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
			0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0x19, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
		},
	},
}

var goldenResponses = []struct {
	opContext uint64
	want      []byte
}{
	{0xF01D, []byte{0x09, 0x1d, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
	{0, []byte{0x09, 0, 0, 0, 0, 0, 0, 0, 0}},
	{math.MaxUint64, []byte{0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
}

func TestRequestGolden(t *testing.T) {
	for _, tc := range goldenRequests {
		got, err := EncodeRequest(tc.offset, tc.length, tc.opContext)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
		require.Len(t, got, RequestSize)

		// The generated type directly, with the default marshaller.
		raw, err := proto.Marshal(NewRequest(tc.offset, tc.length, tc.opContext))
		require.NoError(t, err)
		require.Equal(t, tc.want, raw)

		m, err := DecodeRequest(tc.want)
		require.NoError(t, err)
		require.Equal(t, tc.offset, m.GetOffset())
		require.Equal(t, tc.length, m.GetLength())
		require.Equal(t, tc.opContext, m.GetOpContext())
	}
}

func TestResponseGolden(t *testing.T) {
	for _, tc := range goldenResponses {
		got, err := EncodeResponse(tc.opContext)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
		require.Len(t, got, ResponseSize)

		m, err := DecodeResponse(tc.want)
		require.NoError(t, err)
		require.Equal(t, tc.opContext, m.GetOpContext())
	}
}

// Decoding behaves as protobuf-c's unpack does on the same bytes (checked
// with protobuf-c 1.4.1): field order does not matter, unknown fields are
// skipped, a missing required field or trailing zero padding fails.
func TestDecodeLikeProtobufC(t *testing.T) {
	reordered := []byte{
		0x19, 3, 0, 0, 0, 0, 0, 0, 0,
		0x11, 2, 0, 0, 0, 0, 0, 0, 0,
		0x09, 1, 0, 0, 0, 0, 0, 0, 0,
	}
	m, err := DecodeRequest(reordered)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 2, 3}, []uint64{m.GetOffset(), m.GetLength(), m.GetOpContext()})

	valid, _ := EncodeRequest(1, 2, 3)
	withUnknown := append(bytes.Clone(valid), 0x20, 0x05) // field 4, varint 5
	m, err = DecodeRequest(withUnknown)
	require.NoError(t, err)
	require.Equal(t, uint64(3), m.GetOpContext())

	_, err = DecodeRequest(valid[:9]) // only offset
	require.Error(t, err)
	_, err = DecodeRequest(nil)
	require.Error(t, err)
	padded := make([]byte, MsgSizeMax) // a whole receive slot
	copy(padded, valid)
	_, err = DecodeRequest(padded)
	require.Error(t, err)

	_, err = DecodeResponse(nil)
	require.Error(t, err)
	_, err = DecodeResponse([]byte{0x09, 1, 2, 3})
	require.Error(t, err)
	// A request is a valid response (field 1 is op_context there) plus
	// unknown fields 2 and 3: protobuf accepts it, so must the caller check
	// op_context, as the C client does.
	r, err := DecodeResponse(goldenRequests[0].want)
	require.NoError(t, err)
	require.Equal(t, uint64(0x11), r.GetOpContext())
}

func TestMarshalRequiresFields(t *testing.T) {
	_, err := proto.Marshal(&GPSPMFlushRequest{})
	require.Error(t, err)
	_, err = proto.Marshal(&GPSPMFlushResponse{})
	require.Error(t, err)
}

func TestSlots(t *testing.T) {
	require.Equal(t, 0, SendOffset)
	require.Equal(t, 512, RecvOffset)
	require.Equal(t, 1024, MsgBufferSize)
	require.Equal(t, uint64(0xF01D), FlushID)

	buf := make([]byte, MsgBufferSize)
	send, err := SendSlot(buf)
	require.NoError(t, err)
	recv, err := RecvSlot(buf)
	require.NoError(t, err)
	require.Len(t, send, MsgSizeMax)
	require.Len(t, recv, MsgSizeMax)
	req, _ := EncodeRequest(17, 1024, FlushID)
	copy(send, req)
	resp, _ := EncodeResponse(FlushID)
	copy(recv, resp)
	require.Equal(t, req, buf[:RequestSize])
	require.Equal(t, resp, buf[512:512+ResponseSize])
	// Slots cannot grow into each other.
	require.Equal(t, MsgSizeMax, cap(send))

	_, err = RecvSlot(make([]byte, MsgBufferSize-1))
	require.Error(t, err)
	_, err = SendSlot(make([]byte, MsgSizeMax-1))
	require.Error(t, err)
}

func FuzzDecodeRequest(f *testing.F) {
	for _, tc := range goldenRequests {
		f.Add(tc.want)
	}
	f.Add([]byte{0x09})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeRequest(b)
		if err != nil {
			return
		}
		enc, err := EncodeRequest(m.GetOffset(), m.GetLength(), m.GetOpContext())
		require.NoError(t, err)
		again, err := DecodeRequest(enc)
		require.NoError(t, err)
		require.True(t, proto.Equal(NewRequest(m.GetOffset(), m.GetLength(), m.GetOpContext()), again))
	})
}

func FuzzDecodeResponse(f *testing.F) {
	for _, tc := range goldenResponses {
		f.Add(tc.want)
	}
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeResponse(b)
		if err != nil {
			return
		}
		enc, err := EncodeResponse(m.GetOpContext())
		require.NoError(t, err)
		require.Len(t, enc, ResponseSize)
	})
}
