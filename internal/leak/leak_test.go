package leak

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

type fakeM func() int

func (f fakeM) Run() int { return f() }

func TestTrackRelease(t *testing.T) {
	enabled.Store(false)
	require.Nil(t, Track("off"), "tracking is off until Enable")
	(*Handle)(nil).Release() // no-op

	Enable()
	before := Count()
	h := Track("thing")
	require.NotNil(t, h)
	require.Equal(t, before+1, Count())
	live := Live()
	require.NotEmpty(t, live)
	require.Contains(t, joined(live), "thing created at:")
	require.Contains(t, joined(live), "TestTrackRelease")
	h.Release()
	h.Release() // second call is a no-op
	require.Equal(t, before, Count())
}

func joined(s []string) string {
	var b bytes.Buffer
	for _, x := range s {
		b.WriteString(x)
	}
	return b.String()
}

func TestRunFailsOnLeak(t *testing.T) {
	var out bytes.Buffer
	var h *Handle
	code := run(fakeM(func() int { h = Track("leaky"); return 0 }), &out)
	require.Equal(t, ExitCode, code)
	require.Contains(t, out.String(), "leaky created at:")
	require.Contains(t, out.String(), "1 object(s) never closed")
	h.Release()

	out.Reset()
	code = run(fakeM(func() int { Track("x").Release(); return 0 }), &out)
	require.Equal(t, 0, code)
	require.Empty(t, out.String())

	// A failing run keeps its own exit code.
	out.Reset()
	code = run(fakeM(func() int { h = Track("y"); return 1 }), &out)
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "y created at:")
	h.Release()
}
