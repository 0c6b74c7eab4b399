package common

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// helloImage builds a hello_t image by hand: 4-byte little-endian lang, then
// str zero-filled to 1024 bytes.
func helloImage(lang byte, str []byte) []byte {
	b := make([]byte, 1028)
	b[0] = lang
	copy(b[4:], str)
	return b
}

func TestHelloLayoutConstants(t *testing.T) {
	// sizeof(struct hello_t) and offsetof(str) as gcc lays it out on x86-64.
	require.Equal(t, 1028, HelloTSize)
	require.Equal(t, 4, HelloStrOffset)
	require.Equal(t, 1024, HelloStrSize)
	require.Equal(t, 17, SignatureLen)
}

func TestHelloGolden(t *testing.T) {
	en := helloImage(0, []byte("Hello world!"))
	// "¡Hola Mundo!" in UTF-8: C2 A1 then ASCII.
	es := helloImage(1, []byte{0xc2, 0xa1, 'H', 'o', 'l', 'a', ' ', 'M', 'u', 'n', 'd', 'o', '!'})

	got, err := Hello{Lang: LangEn, Str: "Hello world!"}.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, en, got)
	got, err = Hello{Lang: LangEs, Str: "¡Hola Mundo!"}.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, es, got)

	// write_hello_str over garbage zero-fills all of str after the string.
	b := bytes.Repeat([]byte{0xcc}, HelloTSize)
	require.NoError(t, WriteHelloStr(b, LangEs))
	require.Equal(t, es, b)
	require.NoError(t, WriteHelloStr(b, LangEn))
	require.Equal(t, en, b)

	var h Hello
	require.NoError(t, h.UnmarshalBinary(es))
	require.Equal(t, Hello{Lang: LangEs, Str: "¡Hola Mundo!"}, h)
	s, err := HelloStr(en)
	require.NoError(t, err)
	require.Equal(t, "Hello world!", s)
}

func TestTranslateToggles(t *testing.T) {
	b := make([]byte, HelloTSize)
	n, err := InitHello(b)
	require.NoError(t, err)
	require.Equal(t, HelloTSize, n)
	require.Equal(t, helloImage(0, []byte("Hello world!")), b)

	var out strings.Builder
	lang, err := Translate(&out, b)
	require.NoError(t, err)
	require.Equal(t, LangEs, lang)
	require.Equal(t, "translating...\n", out.String())
	s, _ := HelloStr(b)
	require.Equal(t, "¡Hola Mundo!", s)

	lang, err = Translate(nil, b)
	require.NoError(t, err)
	require.Equal(t, LangEn, lang)
	require.Equal(t, helloImage(0, []byte("Hello world!")), b)

	// A zeroed (never initialised) hello_t has lang en and an empty string:
	// translate turns it into Spanish, as the C client does on a fresh PMem
	// file initialised with the offset quirk.
	z := make([]byte, HelloTSize)
	lang, err = Translate(nil, z)
	require.NoError(t, err)
	require.Equal(t, LangEs, lang)
}

func TestNextLangUnsignedWrap(t *testing.T) {
	require.Equal(t, LangEs, NextLang(LangEn))
	require.Equal(t, LangEn, NextLang(LangEs))
	// (0xFFFFFFFF + 1) wraps to 0 in unsigned int arithmetic, 0 % 2 = 0.
	require.Equal(t, LangEn, NextLang(0xFFFFFFFF))
	require.Equal(t, LangEs, NextLang(2))
	require.Equal(t, LangEn, NextLang(3))
	// Translate of an unknown stored lang still lands on a valid one.
	b := helloImage(7, nil)
	lang, err := Translate(nil, b)
	require.NoError(t, err)
	require.Equal(t, LangEn, lang)
}

func TestHelloErrors(t *testing.T) {
	for n := 0; n < HelloTSize; n += 97 {
		var h Hello
		require.ErrorIs(t, h.UnmarshalBinary(make([]byte, n)), ErrShortBuffer)
		require.ErrorIs(t, WriteHelloStr(make([]byte, n), LangEn), ErrShortBuffer)
		_, err := Translate(nil, make([]byte, n))
		require.ErrorIs(t, err, ErrShortBuffer)
		_, err = InitHello(make([]byte, n))
		require.ErrorIs(t, err, ErrShortBuffer)
		require.Contains(t, err.Error(), "PMem has too small size")
	}
	require.ErrorIs(t, WriteHelloStr(make([]byte, HelloTSize), 2), ErrInvalid)

	// str without a NUL in its 1024 bytes.
	b := helloImage(0, bytes.Repeat([]byte{'x'}, HelloStrSize))
	var h Hello
	require.ErrorIs(t, h.UnmarshalBinary(b), ErrInvalid)

	_, err := Hello{Str: strings.Repeat("x", HelloStrSize)}.MarshalBinary()
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Hello{Str: "a\x00b"}.MarshalBinary()
	require.ErrorIs(t, err, ErrInvalid)
	got, err := Hello{Str: strings.Repeat("x", HelloStrSize-1)}.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, byte(0), got[HelloTSize-1])
}

func FuzzHello(f *testing.F) {
	f.Add(helloImage(0, []byte("Hello world!")))
	f.Add(helloImage(1, []byte("¡Hola Mundo!")))
	f.Add([]byte{1, 2, 3})
	f.Add(bytes.Repeat([]byte{0xff}, HelloTSize+3))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Hello
		if err := h.UnmarshalBinary(b); err != nil {
			return
		}
		enc, err := h.MarshalBinary()
		require.NoError(t, err)
		var again Hello
		require.NoError(t, again.UnmarshalBinary(enc))
		require.Equal(t, h, again)
		// Translate always leaves a valid language and greeting.
		img := bytes.Clone(b[:HelloTSize])
		lang, err := Translate(nil, img)
		require.NoError(t, err)
		require.Less(t, lang, Lang(LangNum))
		s, err := HelloStr(img)
		require.NoError(t, err)
		require.Equal(t, HelloStrings[lang], s)
	})
}
