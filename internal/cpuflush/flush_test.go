package cpuflush

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFlushKeepsData(t *testing.T) {
	if !Supported() {
		t.Skip("no cache flush in this build")
	}
	t.Logf("instruction: %s", Instruction())
	require.Contains(t, []string{"clwb", "clflushopt", "clflush"}, Instruction())
	b := make([]byte, 4096+13)
	for i := range b {
		b[i] = byte(i)
	}
	Flush(b[7:]) // unaligned start and end
	Flush(b[:0]) // empty is fine
	for i := range b {
		require.Equal(t, byte(i), b[i])
	}
}

func TestObserveSeesEachRange(t *testing.T) {
	if !Supported() {
		t.Skip("no cache flush in this build")
	}
	b := make([]byte, 256)
	var seen [][]byte
	Observe(func(r []byte) { seen = append(seen, r) })
	Flush(b[64:128])
	Flush(b[:0]) // nothing written back, nothing reported
	Flush(b[3:9])
	Observe(nil)
	Flush(b)
	require.Len(t, seen, 2)
	require.Same(t, &b[64], &seen[0][0])
	require.Len(t, seen[0], 64)
	require.Same(t, &b[3], &seen[1][0])
	require.Len(t, seen[1], 6)
}
