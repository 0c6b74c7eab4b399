package common

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/mr"
)

// mrDesc is a 21-byte memory region descriptor: raddr, length, rkey, usage.
func mrDesc(addr, length uint64, rkey uint32, usage mr.Usage) []byte {
	d := make([]byte, 0, MRDescriptorSize)
	d = binary.LittleEndian.AppendUint64(d, addr)
	d = binary.LittleEndian.AppendUint64(d, length)
	d = binary.LittleEndian.AppendUint32(d, rkey)
	return append(d, byte(usage))
}

func TestRemoteMR(t *testing.T) {
	pdata, err := CommonData{DataOffset: 17, MRDesc: mrDesc(0x7f0000001000, 4096, 0x1234, mr.UsageWriteDst)}.MarshalBinary()
	require.NoError(t, err)
	// rdma_cm may deliver more than was sent
	r, off, err := RemoteMR(append(pdata, make([]byte, 28)...))
	require.NoError(t, err)
	require.Equal(t, 17, off)
	require.EqualValues(t, 0x7f0000001000, r.Addr())
	require.EqualValues(t, 4096, r.Size())
	require.Equal(t, mr.UsageWriteDst, r.Usage())

	_, _, err = RemoteMR(pdata[:27])
	require.EqualError(t, err, "Received connection's private data is too small (27 < 28)")
	_, _, err = RemoteMR(nil)
	require.EqualError(t, err, "Received connection's private data is too small (0 < 28)")

	// a descriptor the library refuses (usage 0)
	bad, err := CommonData{MRDesc: mrDesc(1, 2, 3, 0)}.MarshalBinary()
	require.NoError(t, err)
	_, _, err = RemoteMR(bad)
	require.ErrorContains(t, err, "mr.RemoteFromDescriptor")
}

func TestPrivateDataForOffset(t *testing.T) {
	// checked before the region is looked at
	_, err := PrivateDataFor(nil, 1<<16)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = PrivateDataFor(nil, -1)
	require.ErrorIs(t, err, ErrInvalid)
}
