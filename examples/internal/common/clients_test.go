package common

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSlots(t *testing.T) {
	s := make(slots, 3)
	for want := range 3 {
		got, ok := s.take()
		require.True(t, ok)
		require.Equal(t, want, got, "the first free slot")
	}
	_, ok := s.take()
	require.False(t, ok, "all taken")
	s.free(1)
	got, ok := s.take()
	require.True(t, ok)
	require.Equal(t, 1, got)
}
