package common

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// seqDesc returns n bytes first, first+1, ...
func seqDesc(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

// Golden vector written from struct common_data: u16 data_offset LE, u8
// mr_desc_size, u8 pcfg_desc_size, 24 descriptor bytes. The same struct
// compiled with gcc on x86-64 and filled with these values dumps exactly
// these 28 bytes.
func TestCommonDataGoldenSynthetic(t *testing.T) {
	d := CommonData{DataOffset: 0x0111, MRDesc: seqDesc(0xA0, 21), PeerCfgDesc: []byte{0x01}}
	want := []byte{
		0x11, 0x01, // data_offset 0x0111, little-endian
		0x15, // mr_desc_size 21
		0x01, // pcfg_desc_size 1
		0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa,
		0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, // MR descriptor
		0x01,       // peer-cfg descriptor (direct_write_to_pmem = true)
		0x00, 0x00, // unused
	}
	got, err := d.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Len(t, got, CommonDataSize)

	var back CommonData
	require.NoError(t, back.UnmarshalBinary(want))
	require.Equal(t, d, back)
}

// A realistic 05 server on PMem: data_offset = SIGNATURE_LEN (17), an MR
// descriptor {raddr 0x00007f0000001000, length 1041, rkey 0x12345678,
// usage WRITE_DST|FLUSH_TYPE_VISIBILITY|FLUSH_TYPE_PERSISTENT = 0x38}, all
// little-endian, and peer cfg direct_write_to_pmem = false.
func TestCommonDataGolden05Server(t *testing.T) {
	mrDesc := []byte{
		0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, // raddr
		0x11, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // length 1041
		0x78, 0x56, 0x34, 0x12, // rkey
		0x38, // usage
	}
	want := append([]byte{0x11, 0x00, 0x15, 0x01}, mrDesc...)
	want = append(want, 0x00 /* pcfg: false */, 0x00, 0x00)
	require.Len(t, want, 28)

	got, err := CommonData{DataOffset: uint16(SignatureLen), MRDesc: mrDesc, PeerCfgDesc: []byte{0}}.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// Servers other than 05 send no peer-cfg descriptor: pcfg_desc_size 0 and
// the descriptor tail zeroed (the C code zero-initialises the struct).
func TestCommonDataMROnly(t *testing.T) {
	d := CommonData{DataOffset: 8, MRDesc: seqDesc(1, 21)}
	got, err := d.MarshalBinary()
	require.NoError(t, err)
	want := append([]byte{0x08, 0x00, 0x15, 0x00}, seqDesc(1, 21)...)
	want = append(want, 0, 0, 0)
	require.Equal(t, want, got)

	var back CommonData
	require.NoError(t, back.UnmarshalBinary(got))
	require.Equal(t, uint16(8), back.DataOffset)
	require.Equal(t, seqDesc(1, 21), back.MRDesc)
	require.Empty(t, back.PeerCfgDesc)
}

// rdma_cm may deliver more private data than was sent (56 bytes on connect,
// 196 on accept); the receiver only needs the first 28.
func TestCommonDataLongerPrivateData(t *testing.T) {
	d := CommonData{DataOffset: 17, MRDesc: seqDesc(0x40, 21), PeerCfgDesc: []byte{1}}
	b, err := d.MarshalBinary()
	require.NoError(t, err)
	padded := append(bytes.Clone(b), bytes.Repeat([]byte{0xee}, 196-len(b))...)

	var back CommonData
	require.NoError(t, back.UnmarshalBinary(padded))
	require.Equal(t, d, back)

	mr, err := DecodeCommonDataMROnly(padded)
	require.NoError(t, err)
	require.Equal(t, CommonData{DataOffset: 17, MRDesc: seqDesc(0x40, 21)}, mr)
}

func TestCommonDataDecodeCopies(t *testing.T) {
	b, err := CommonData{MRDesc: seqDesc(1, 21), PeerCfgDesc: []byte{1}}.MarshalBinary()
	require.NoError(t, err)
	var d CommonData
	require.NoError(t, d.UnmarshalBinary(b))
	clear(b)
	require.Equal(t, seqDesc(1, 21), d.MRDesc)
	require.Equal(t, []byte{1}, d.PeerCfgDesc)
}

func TestCommonDataErrors(t *testing.T) {
	// Too big to marshal.
	_, err := CommonData{MRDesc: make([]byte, 21), PeerCfgDesc: make([]byte, 4)}.MarshalBinary()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = CommonData{MRDesc: make([]byte, 25)}.MarshalBinary()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	// 24 bytes together is the limit.
	_, err = CommonData{MRDesc: make([]byte, 21), PeerCfgDesc: make([]byte, 3)}.MarshalBinary()
	require.NoError(t, err)

	var d CommonData
	for n := 0; n < CommonDataSize; n++ {
		require.ErrorIs(t, d.UnmarshalBinary(make([]byte, n)), rpma.ErrInvalidArgument, "len %d", n)
		_, err := DecodeCommonDataMROnly(make([]byte, n))
		require.ErrorIs(t, err, ErrShortBuffer, "len %d", n)
	}

	bad := make([]byte, CommonDataSize)
	bad[2], bad[3] = 21, 4 // 25 > 24
	require.ErrorIs(t, d.UnmarshalBinary(bad), rpma.ErrInvalidArgument)
	// The MR-only reader ignores pcfg_desc_size (06's C client may send
	// garbage there).
	mr, err := DecodeCommonDataMROnly(bad)
	require.NoError(t, err)
	require.Len(t, mr.MRDesc, 21)
	bad[2] = 25
	_, err = DecodeCommonDataMROnly(bad)
	require.ErrorIs(t, err, ErrInvalid)
}

func FuzzCommonData(f *testing.F) {
	seed, _ := CommonData{DataOffset: 17, MRDesc: seqDesc(0xA0, 21), PeerCfgDesc: []byte{1}}.MarshalBinary()
	f.Add(seed)
	f.Add(make([]byte, CommonDataSize))
	f.Add([]byte{0x11, 0x00, 0xff, 0xff})
	f.Add(append(bytes.Clone(seed), 0xff, 0xff))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d CommonData
		err := d.UnmarshalBinary(b)
		mr, mrErr := DecodeCommonDataMROnly(b)
		if err != nil {
			return
		}
		require.NoError(t, mrErr)
		require.Equal(t, d.MRDesc, mr.MRDesc)
		enc, err := d.MarshalBinary()
		require.NoError(t, err)
		require.Len(t, enc, CommonDataSize)
		// Everything the layout defines survives the round trip.
		used := 4 + len(d.MRDesc) + len(d.PeerCfgDesc)
		require.Equal(t, b[:used], enc[:used])
		var again CommonData
		require.NoError(t, again.UnmarshalBinary(enc))
		require.Equal(t, d, again)
	})
}
