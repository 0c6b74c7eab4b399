package common

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/pmem"
)

// captureStderr makes the helpers' stderr a buffer for the test.
func captureStderr(t *testing.T) *bytes.Buffer {
	var b bytes.Buffer
	old := stderr
	stderr = &b
	t.Cleanup(func() { stderr = old })
	return &b
}

// Without <pmem-path>: DRAM of the data's size, initialised as the clients
// do, and the librpma examples' message on stderr.
func TestOpenMemDRAM(t *testing.T) {
	out := captureStderr(t)
	m, err := OpenMem("", SignatureCheck{Size: HelloTSize, Init: InitHello})
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, NoPMemMsg, out.String())
	require.False(t, m.IsPMem)
	require.Zero(t, m.DataOffset)
	require.Len(t, m.Buf, HelloTSize)
	require.Equal(t, m.Buf, m.Data)
	str, err := HelloStr(m.Data)
	require.NoError(t, err)
	require.Equal(t, HelloStrings[LangEn], str)

	// the servers': zeroed, no init
	s, err := OpenMem("", SignatureCheck{Size: HelloStrSize})
	require.NoError(t, err)
	defer s.Close()
	require.Len(t, s.Buf, HelloStrSize)
	require.Equal(t, make([]byte, HelloStrSize), s.Data)
}

// With a file (here a plain file mapping): all of it is the memory, the
// data follows the signature at the offset, and a second run finds what
// the first one left.
func TestOpenMemFile(t *testing.T) {
	out := captureStderr(t)
	path := filepath.Join(t.TempDir(), "pmem")
	const size = 1 << 16
	require.NoError(t, os.WriteFile(path, make([]byte, size), 0o644))

	check := SignatureCheck{Offset: PMemClientOffset, Size: HelloTSize, Init: InitHello}
	m, err := OpenMem(path, check)
	require.NoError(t, err)
	require.Contains(t, out.String(), path)
	require.True(t, m.IsPMem)
	require.Len(t, m.Buf, size)
	require.Equal(t, PMemClientOffset+SignatureLen, m.DataOffset)
	require.Len(t, m.Data, HelloTSize)
	require.True(t, HasSignature(m.Buf, PMemClientOffset))

	// translate and persist, as the clients end
	str, err := TranslateHello(nil, m)
	require.NoError(t, err)
	require.Equal(t, HelloStrings[LangEs], str)
	require.NoError(t, m.Close())

	m, err = OpenMem(path, check)
	require.NoError(t, err)
	defer m.Close()
	str, err = HelloStr(m.Data)
	require.NoError(t, err)
	require.Equal(t, HelloStrings[LangEs], str, "the signature is there: the data is kept")
}

func TestOpenMemErrors(t *testing.T) {
	captureStderr(t)
	dir := t.TempDir()
	_, err := OpenMem(filepath.Join(dir, "missing"), SignatureCheck{Size: HelloStrSize})
	require.ErrorContains(t, err, "pmem_map_file() for ")

	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, make([]byte, 512), 0o644))
	_, err = OpenMem(small, SignatureCheck{Size: HelloStrSize})
	require.ErrorIs(t, err, ErrShortBuffer)
	require.ErrorContains(t, err, small+": ")
}

func TestMapPMemSays(t *testing.T) {
	out := captureStderr(t)
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 4096), 0o644))
	r, err := MapPMem(path)
	require.NoError(t, err)
	defer r.Close()
	switch r.Kind() {
	case pmem.FsDAX:
		require.Contains(t, out.String(), "Using FsDAX "+path)
	default:
		require.Equal(t, "Using a file mapping (msync) "+path+" (4096 bytes): not persistent memory\n", out.String())
	}
}

// TranslateHello on DRAM: translated, nothing to persist.
func TestTranslateHelloDRAM(t *testing.T) {
	captureStderr(t)
	m, err := OpenMem("", SignatureCheck{Size: HelloTSize, Init: InitHello})
	require.NoError(t, err)
	defer m.Close()
	var out bytes.Buffer
	str, err := TranslateHello(&out, m)
	require.NoError(t, err)
	require.Equal(t, TranslatingMsg, out.String())
	require.Equal(t, HelloStrings[LangEs], str)
}
