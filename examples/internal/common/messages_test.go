package common

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// glibc rand() values checked against srand()/rand() of glibc 2.36 on
// x86-64 (a C program printing them).
func TestGlibcRandGolden(t *testing.T) {
	for _, tc := range []struct {
		seed uint32
		want [3]int32
	}{
		{0, [3]int32{1804289383, 846930886, 1681692777}}, // 0 behaves as 1
		{1, [3]int32{1804289383, 846930886, 1681692777}},
		{2, [3]int32{1505335290, 1738766719, 190686788}},
		{7, [3]int32{1045618677, 1863967299, 1272579899}},
		{8, [3]int32{757547896, 1695630744, 1945246242}},
		{9, [3]int32{444454915, 1502197874, 436864165}},
		{11, [3]int32{1989311423, 1130649494, 665249397}},
		{12, [3]int32{1687063760, 945274514, 247215794}},
		{42, [3]int32{71876166, 708592740, 1483128881}},
		{2147483648, [3]int32{1336741213, 1210407648, 1447044896}}, // negative as int32
		{123456789, [3]int32{1965102536, 1639725855, 706684578}},
	} {
		r := NewGlibcRand(tc.seed)
		got := [3]int32{r.Rand(), r.Rand(), r.Rand()}
		require.Equal(t, tc.want, got, "seed %d", tc.seed)
	}
	// Many draws stay in [0, RAND_MAX].
	r := NewGlibcRand(5)
	for i := 0; i < 10000; i++ {
		require.GreaterOrEqual(t, r.Rand(), int32(0))
	}
}

// The names the C 06 clients pick for run-all-examples.sh's seeds 8 9 11 12.
func TestPickName(t *testing.T) {
	require.Len(t, Names06, 12)
	require.Len(t, Names06scch, 13)
	var got06, gotScch []string
	for _, seed := range []uint64{8, 9, 11, 12} {
		got06 = append(got06, PickName(Names06, seed))
		gotScch = append(gotScch, PickName(Names06scch, seed))
	}
	require.Equal(t, []string{"Lukasz", "Piotr", "Xiaoyan", "Tomasz"}, got06)
	require.Equal(t, []string{"Chet", "Piotr", "Piotr", "Lukasz"}, gotScch)
	// seed % UINT_MAX: 4294967295 -> 0 -> 1, 4294967296 -> 1.
	require.Equal(t, PickName(Names06, 1), PickName(Names06, 4294967295))
	require.Equal(t, PickName(Names06, 1), PickName(Names06, 4294967296))
	require.Equal(t, "Pawel", PickName(Names06, 2)) // 1505335290 % 12 = 6
}

func TestNameGolden(t *testing.T) {
	b := EncodeName("Lukasz")
	want := make([]byte, 32)
	copy(want, "Lukasz")
	require.Equal(t, want, b[:])
	n, err := DecodeName(b[:])
	require.NoError(t, err)
	require.Equal(t, "Lukasz", n)

	// Cut to 31 bytes plus NUL.
	long := strings.Repeat("abcdefghij", 4)
	b = EncodeName(long)
	require.Equal(t, append([]byte(long[:31]), 0), b[:])
	n, err = DecodeName(b[:])
	require.NoError(t, err)
	require.Equal(t, long[:31], n)

	// A slot in the server's buffer: 06 reads client i's name at i*32.
	buf := make([]byte, MaxNameSize*ClientMax)
	e := EncodeName("Xiang")
	copy(buf[3*MaxNameSize:], e[:])
	n, err = DecodeName(buf[3*MaxNameSize:])
	require.NoError(t, err)
	require.Equal(t, "Xiang", n)

	_, err = DecodeName(make([]byte, 31))
	require.ErrorIs(t, err, ErrShortBuffer)
	_, err = DecodeName(bytes.Repeat([]byte{'x'}, 40))
	require.ErrorIs(t, err, ErrInvalid)
}

func TestCounterGolden(t *testing.T) {
	require.Equal(t, [8]byte{7, 0, 0, 0, 0, 0, 0, 0}, EncodeCounter(7))
	require.Equal(t, [8]byte{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}, EncodeCounter(0x0102030405060708))
	require.Equal(t, [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, EncodeCounter(IMDone))
	v, err := DecodeCounter([]byte{8, 0, 0, 0, 0, 0, 0, 0})
	require.NoError(t, err)
	require.Equal(t, uint64(8), v)
	for _, n := range []int{0, 1, 7, 9, 512} {
		_, err := DecodeCounter(make([]byte, n))
		require.ErrorIs(t, err, ErrInvalid, "len %d", n)
	}
	require.Equal(t, 0, SlotOffset(0))
	require.Equal(t, 72, SlotOffset(9))
	require.Equal(t, 0, RecvOffset)
	require.Equal(t, 8, SendOffset)
}

func TestImmGolden(t *testing.T) {
	// run-all-examples.sh passes 1234 = 0x04D2.
	require.Equal(t, [4]byte{0xd2, 0x04, 0x00, 0x00}, EncodeImm(1234))
	v, err := DecodeImm([]byte{0xd2, 0x04, 0x00, 0x00, 0xee})
	require.NoError(t, err)
	require.Equal(t, uint32(1234), v)
	_, err = DecodeImm([]byte{1, 2, 3})
	require.ErrorIs(t, err, ErrShortBuffer)

	w := EncodeWriteWithImm(1234)
	require.Len(t, w, 1024)
	require.Equal(t, []byte{0xd2, 0x04, 0, 0}, w[:4])
	require.Equal(t, make([]byte, 1020), w[4:])

	require.Nil(t, EncodeSendWithImm("", false))
	s := EncodeSendWithImm("1st_word", true)
	require.Len(t, s, 1024)
	require.Equal(t, "1st_word", CString(s))
	require.Equal(t, make([]byte, 1024-8), s[8:])
	s = EncodeSendWithImm(strings.Repeat("z", 2000), true)
	require.Equal(t, byte(0), s[1023])
	require.Len(t, CString(s), 1023)

	for in, want := range map[string]uint32{"1234": 1234, "0": 0, "4294967295": math.MaxUint32, " 7x": 7, "abc": 0} {
		got, err := ParseImm(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"4294967296", "-1", "99999999999999999999"} {
		_, err := ParseImm(in)
		require.Error(t, err, in)
	}
}

func TestStrtoulNoError(t *testing.T) {
	for in, want := range map[string]uint64{
		"7":                    7,
		"0":                    0,
		"":                     0,
		"abc":                  0,
		"12abc":                12,
		" \t\n\v\f\r+12":       12,
		"-1":                   math.MaxUint64,
		"-0":                   0,
		"- 1":                  0,
		"--1":                  0,
		"+-1":                  0,
		"18446744073709551615": math.MaxUint64,
		"007":                  7,
		"1024":                 1024,
	} {
		got, err := StrtoulNoError(in)
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, got, "%q", in)
	}
	for _, in := range []string{"18446744073709551616", "-18446744073709551616", "99999999999999999999999"} {
		_, err := StrtoulNoError(in)
		require.ErrorIs(t, err, ErrInvalid, in)
		require.Contains(t, err.Error(), "strtoul("+in+") overflowed")
	}
}

func TestCStringAndStrncpy(t *testing.T) {
	require.Equal(t, "ab", CString([]byte("ab\x00cd")))
	require.Equal(t, "abcd", CString([]byte("abcd")))
	require.Equal(t, "", CString(nil))

	b := bytes.Repeat([]byte{0xff}, 8)
	Strncpy(b, "LOG", 8)
	require.Equal(t, []byte{'L', 'O', 'G', 0, 0, 0, 0, 0}, b)
	b = bytes.Repeat([]byte{0xff}, 4)
	Strncpy(b, "abcdef", 3) // no NUL when src is as long as n
	require.Equal(t, []byte{'a', 'b', 'c', 0xff}, b)
	Strncpy(b, "abcdef", 10) // n clipped to the buffer
	require.Equal(t, []byte("abcd"), b)
}

func FuzzDecoders(f *testing.F) {
	f.Add([]byte{7, 0, 0, 0, 0, 0, 0, 0}, "1234")
	f.Add([]byte("Lukasz\x00"), "-1")
	f.Add(bytes.Repeat([]byte{'x'}, 33), "18446744073709551616")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		if v, err := DecodeCounter(b); err == nil {
			require.Equal(t, b, func() []byte { e := EncodeCounter(v); return e[:] }())
		}
		if v, err := DecodeImm(b); err == nil {
			require.Equal(t, b[:4], func() []byte { e := EncodeImm(v); return e[:] }())
		}
		if n, err := DecodeName(b); err == nil {
			e := EncodeName(n)
			require.Equal(t, n, CString(e[:]))
		}
		_ = CString(b)
		if v, err := StrtoulNoError(s); err == nil {
			_, _ = ParseImm(s)
			_ = v
		}
		Strncpy(b, s, len(s))
		_ = EncodeName(s)
		_ = LogWord(s)
	})
}
