package common

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogLayoutConstants(t *testing.T) {
	// struct log as gcc lays it out on x86-64.
	require.Equal(t, 1040, LogSize)
	require.Equal(t, 8, LogUsedOffset)
	require.Equal(t, 16, LogDataOffset)
	require.Equal(t, 0, LogUsedOffset%8, "rpma_atomic_write needs an 8-byte aligned offset")
}

// A fresh PMem log: used = 16 persisted first, then "LOG" + 5 NULs
// (strncpy into the 8-byte field) persisted.
func TestInitLogGolden(t *testing.T) {
	mem := bytes.Repeat([]byte{0x77}, LogSize)
	persist, calls, data := recorder(&mem)
	ok, err := InitLog(mem, persist)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []persistCall{{8, 8}, {0, 8}}, *calls)
	require.Equal(t, [][]byte{
		{0x10, 0, 0, 0, 0, 0, 0, 0},
		{'L', 'O', 'G', 0, 0, 0, 0, 0},
	}, *data)
	require.Equal(t, []byte{
		'L', 'O', 'G', 0, 0, 0, 0, 0,
		0x10, 0, 0, 0, 0, 0, 0, 0,
	}, mem[:16])
	require.Equal(t, bytes.Repeat([]byte{0x77}, LogDataSize), mem[16:], "data untouched")

	// Signed: nothing happens, even with a non-zero tail after "LOG\0"
	// (the C strncmp stops at the NUL).
	mem[5] = 'x'
	*calls = nil
	ok, err = InitLog(mem, persist)
	require.NoError(t, err)
	require.False(t, ok)
	require.Empty(t, *calls)

	mem[3] = 'X' // "LOGX": not the signature
	ok, err = InitLog(mem, nil)
	require.NoError(t, err)
	require.True(t, ok)
}

// Three words as run-all-examples.sh passes them: the bytes the client
// writes, the used values it atomically writes, and what the server prints.
func TestLogAppendAndPrintGolden(t *testing.T) {
	mem := make([]byte, LogSize)
	require.NoError(t, ResetLog(mem))
	used, err := LogUsed(mem)
	require.NoError(t, err)
	require.Equal(t, uint64(16), used)

	require.Equal(t, []byte("1st_word\x00"), LogWord("1st_word"))
	for i, w := range []string{"1st_word", "2nd_word", "3rd_word"} {
		used, err = AppendLogWord(mem, w)
		require.NoError(t, err)
		require.Equal(t, uint64(16+9*(i+1)), used)
	}
	require.Equal(t, [8]byte{43, 0, 0, 0, 0, 0, 0, 0}, EncodeUsed(used))
	require.Equal(t, []byte{43, 0, 0, 0, 0, 0, 0, 0}, mem[8:16])
	require.Equal(t, []byte("1st_word\x002nd_word\x003rd_word\x00"), mem[16:43])

	out, err := LogPrint(mem)
	require.NoError(t, err)
	require.Equal(t, "1st_word\n2nd_word\n3rd_word\n", out)
	words, err := LogWords(mem)
	require.NoError(t, err)
	require.Equal(t, []string{"1st_word", "2nd_word", "3rd_word"}, words)
}

func TestLogWordTruncation(t *testing.T) {
	long := strings.Repeat("w", 2000)
	w := LogWord(long)
	require.Len(t, w, LogMaxWordLength+1)
	require.Equal(t, byte(0), w[LogMaxWordLength])
	require.Equal(t, []byte("ab\x00"), LogWord("ab\x00cd"))
	require.Equal(t, []byte{0}, LogWord(""))
}

func TestLogErrors(t *testing.T) {
	_, err := InitLog(make([]byte, LogSize-1), nil)
	require.ErrorIs(t, err, ErrShortBuffer)
	for n := 0; n < 16; n++ {
		_, err := LogUsed(make([]byte, n))
		require.ErrorIs(t, err, ErrShortBuffer)
		require.ErrorIs(t, SetLogUsed(make([]byte, n), 1), ErrShortBuffer)
		_, err = LogPrint(make([]byte, n))
		require.Error(t, err)
		_, err = AppendLogWord(make([]byte, n), "x")
		require.Error(t, err)
	}

	// Log full: the word does not fit, nothing changes.
	mem := make([]byte, LogSize)
	require.NoError(t, SetLogUsed(mem, LogSize-3))
	before := bytes.Clone(mem)
	_, err = AppendLogWord(mem, "abc")
	require.ErrorIs(t, err, ErrShortBuffer)
	require.Equal(t, before, mem)
	_, err = AppendLogWord(mem, "ab") // exactly fits
	require.NoError(t, err)

	// used below the data start (zeroed DRAM before ResetLog) or past the end.
	require.NoError(t, SetLogUsed(mem, 3))
	_, err = AppendLogWord(mem, "a")
	require.ErrorIs(t, err, ErrShortBuffer)
	out, err := LogPrint(mem)
	require.NoError(t, err)
	require.Empty(t, out)
	require.NoError(t, SetLogUsed(mem, LogSize+1))
	_, err = LogPrint(mem)
	require.ErrorIs(t, err, ErrInvalid)
	require.NoError(t, SetLogUsed(mem, 1<<63))
	_, err = AppendLogWord(mem, "a")
	require.ErrorIs(t, err, ErrShortBuffer)

	// A torn log (no final NUL) still splits.
	require.NoError(t, ResetLog(mem))
	copy(mem[16:], "ab\x00cd")
	require.NoError(t, SetLogUsed(mem, 16+5))
	words, err := LogWords(mem)
	require.NoError(t, err)
	require.Equal(t, []string{"ab", "cd"}, words)
}

func FuzzLog(f *testing.F) {
	img := make([]byte, LogSize)
	_, _ = InitLog(img, nil)
	_, _ = AppendLogWord(img, "1st_word")
	f.Add(img, "2nd_word")
	f.Add(make([]byte, 20), "x")
	f.Add([]byte{'L', 'O', 'G', 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "")
	f.Fuzz(func(t *testing.T, mem []byte, word string) {
		_, _ = LogPrint(mem)
		_, _ = LogWords(mem)
		before, err := LogContents(mem)
		if err != nil {
			return
		}
		used, err := AppendLogWord(mem, word)
		if err != nil {
			return
		}
		after, err := LogContents(mem)
		require.NoError(t, err)
		w := LogWord(word)
		require.Equal(t, append(before, w...), after)
		require.Equal(t, uint64(LogDataOffset+len(after)), used)
	})
}
