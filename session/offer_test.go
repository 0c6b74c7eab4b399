package session_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

func TestMain(m *testing.M) { leak.Main(m) }

// desc is a region descriptor as mr.Local.Descriptor encodes it.
var desc = []byte{
	0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, // address 0x7f0000001000
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // length 4096
	0x34, 0x12, 0x00, 0x00, // rkey 0x1234
	byte(mr.UsageWriteDst | mr.UsageFlushPersistent), // usage
}

// TestOfferBytes: the layout byte for byte, as librpma's 05 server sends
// struct common_data (data_offset, mr_desc_size, pcfg_desc_size, the two
// descriptors, zeros).
func TestOfferBytes(t *testing.T) {
	b, err := session.Offer{DataOffset: 0x0102, MRDesc: desc, PeerCfgDesc: []byte{1}}.MarshalBinary()
	require.NoError(t, err)
	want := append([]byte{0x02, 0x01, 21, 1}, desc...)
	want = append(want, 1, 0, 0)
	require.Equal(t, want, b)
	require.Len(t, b, session.OfferSize)

	// Padded as rdma_cm pads it: the rest is ignored.
	var o session.Offer
	require.NoError(t, o.UnmarshalBinary(append(b, make([]byte, 168)...)))
	require.Equal(t, uint16(0x0102), o.DataOffset)
	require.Equal(t, desc, o.MRDesc)
	r, err := o.Remote()
	require.NoError(t, err)
	require.Equal(t, uint64(0x7f0000001000), r.Addr())
	require.Equal(t, uint64(4096), r.Size())
	require.Equal(t, mr.UsageFlushPersistent, r.FlushUsage())
	pcfg, err := o.PeerCfg()
	require.NoError(t, err)
	require.True(t, pcfg.DirectWriteToPMem)
}

// TestOfferWithout: no region, no peer configuration (what most of
// librpma's C servers send: the region only, pcfg_desc_size 0).
func TestOfferWithout(t *testing.T) {
	b, err := session.Offer{MRDesc: desc}.MarshalBinary()
	require.NoError(t, err)
	var o session.Offer
	require.NoError(t, o.UnmarshalBinary(b))
	pcfg, err := o.PeerCfg()
	require.NoError(t, err)
	require.Equal(t, peer.Cfg{}, pcfg, "librpma's default")

	o = session.OfferFor(nil, peer.Cfg{DirectWriteToPMem: true})
	b, err = o.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0, 1, 1}, b[:5])
	require.NoError(t, o.UnmarshalBinary(b))
	r, err := o.Remote()
	require.NoError(t, err)
	require.Nil(t, r, "no region offered")
}

func TestOfferInvalid(t *testing.T) {
	_, err := session.Offer{MRDesc: make([]byte, 21), PeerCfgDesc: make([]byte, 4)}.MarshalBinary()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	var o session.Offer
	for _, n := range []int{0, 1, session.OfferSize - 1} {
		require.ErrorIs(t, o.UnmarshalBinary(make([]byte, n)), rpma.ErrInvalidArgument, "%d bytes", n)
	}
	bad := make([]byte, session.OfferSize)
	bad[2], bad[3] = 21, 4
	require.ErrorIs(t, o.UnmarshalBinary(bad), rpma.ErrInvalidArgument, "sizes beyond 24")
	bad[2], bad[3] = 20, 0
	require.NoError(t, o.UnmarshalBinary(bad))
	_, err = o.Remote()
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "a short region descriptor")
}

func FuzzOffer(f *testing.F) {
	b, _ := session.Offer{MRDesc: desc, PeerCfgDesc: []byte{1}}.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var o session.Offer
		if err := o.UnmarshalBinary(b); err != nil {
			require.ErrorIs(t, err, rpma.ErrInvalidArgument)
			return
		}
		again, err := o.MarshalBinary()
		require.NoError(t, err)
		var o2 session.Offer
		require.NoError(t, o2.UnmarshalBinary(again))
		require.Equal(t, o, o2)
	})
}

// TestEventErrorIsConnBroken: an EventError of an event that ends the
// connection matches rpma.ErrConnBroken (as a *rpma.ConnEventError
// does), also wrapped; ESTABLISHED and other targets do not.
func TestEventErrorIsConnBroken(t *testing.T) {
	for _, ev := range []rpma.ConnEvent{rpma.ConnClosed, rpma.ConnLost, rpma.ConnRejected, rpma.ConnUnreachable} {
		err := fmt.Errorf("session: connect: %w", &session.EventError{Op: "connect", Event: ev, Want: rpma.ConnEstablished})
		require.ErrorIs(t, err, rpma.ErrConnBroken, "%v", ev)
		require.NotErrorIs(t, err, rpma.ErrInvalidArgument)
	}
	err := &session.EventError{Op: "hangup", Event: rpma.ConnEstablished, Want: rpma.ConnClosed}
	require.NotErrorIs(t, err, rpma.ErrConnBroken)
}
