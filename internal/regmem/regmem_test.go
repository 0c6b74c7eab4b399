package regmem

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOverlapping(t *testing.T) {
	mem := make([]byte, 100)
	a, b := new(int), new(int)
	require.Zero(t, Overlapping(mem))

	Add(a, mem[10:20])
	require.Equal(t, 1, Overlapping(mem), "a part of it")
	require.Equal(t, 1, Overlapping(mem[19:20]), "its last byte")
	require.Equal(t, 1, Overlapping(mem[5:11]), "its first byte")
	require.Zero(t, Overlapping(mem[20:]), "right after it")
	require.Zero(t, Overlapping(mem[:10]), "right before it")
	require.Zero(t, Overlapping(mem[:0]), "nothing")

	Add(b, mem[15:30])
	require.Equal(t, 2, Overlapping(mem))
	require.Equal(t, 1, Overlapping(mem[25:]))

	Remove(a)
	require.Equal(t, 1, Overlapping(mem))
	Remove(a) // no-op
	Remove(b)
	require.Zero(t, Overlapping(mem))
}
