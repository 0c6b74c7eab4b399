package powerloss

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordRoundTrip(t *testing.T) {
	b := make([]byte, RecordSize)
	_, err := Parse(b)
	require.ErrorIs(t, err, ErrNoRecord, "zeroed memory holds no record")

	r := Record{Round: 3, Seq: 1234}
	r.Put(b)
	got, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, r, got)

	for i := 0; i < RecordSize; i++ {
		torn := append([]byte(nil), b...)
		torn[i] ^= 0x40
		_, err := Parse(torn)
		require.ErrorIs(t, err, ErrNoRecord, "a change at byte %d is detected", i)
	}
}

func TestOffset(t *testing.T) {
	require.Equal(t, 0, Offset(0, 0, 100))
	require.Equal(t, 64, Offset(0, 1, 100))
	require.Equal(t, 100*64+5*64, Offset(1, 5, 100))
}
