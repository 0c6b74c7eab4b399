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
