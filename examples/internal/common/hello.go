// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-hello.h
//   examples/common/common-hello.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The hello structure of librpma's examples/common/common-hello.h, shared by
// examples 03, 04, 05, 09 and 09scch: the client keeps a struct hello_t
// (in PMem or DRAM), the server reads or receives its str.
const (
	// HelloStrSize mirrors HELLO_STR_SIZE: the size of hello_t.str and of
	// the transfer (the whole 1024 bytes, not just the string).
	HelloStrSize = 1024
	// HelloStrOffset mirrors HELLO_STR_OFFSET (offsetof(struct hello_t, str)):
	// str follows the 4-byte enum.
	HelloStrOffset = 4
	// HelloTSize mirrors HELLO_T_SIZE (sizeof(struct hello_t)): 4 + 1024,
	// no padding.
	HelloTSize = HelloStrOffset + HelloStrSize
)

// Lang is enum lang_t {en, es}: an unsigned 32-bit value in hello_t.lang
// (gcc gives an enum without negative values the type unsigned int).
type Lang uint32

const (
	// LangEn is en, the language write_hello_str starts with.
	LangEn Lang = 0
	// LangEs is es.
	LangEs Lang = 1
	// LangNum mirrors LANG_NUM, the number of greetings.
	LangNum = 2
)

// HelloStrings is hello_str[] of common-hello.c, indexed by Lang. The Spanish
// greeting is UTF-8 ("¡" is C2 A1), 13 bytes.
var HelloStrings = [LangNum]string{
	LangEn: "Hello world!",
	LangEs: "¡Hola Mundo!",
}

// TranslatingMsg is what translate() prints to stdout before switching the
// language.
const TranslatingMsg = "translating...\n"

// NextLang is the language translate() switches to: (lang + 1) % LANG_NUM,
// computed as C does (unsigned 32-bit addition, so 0xFFFFFFFF wraps to 0).
func NextLang(l Lang) Lang { return (l + 1) % LangNum }

// Hello is the decoded struct hello_t.
type Hello struct {
	Lang Lang
	// Str is str up to its first NUL.
	Str string
}

// MarshalBinary encodes h as HelloTSize bytes: lang little-endian, then str,
// NUL-terminated and zero-filled. Str must fit HelloStrSize-1 bytes and
// contain no NUL.
func (h Hello) MarshalBinary() ([]byte, error) {
	if err := checkCString("hello_t.str", h.Str, HelloStrSize-1); err != nil {
		return nil, err
	}
	b := make([]byte, HelloTSize)
	binary.LittleEndian.PutUint32(b, uint32(h.Lang))
	copy(b[HelloStrOffset:], h.Str)
	return b, nil
}

// UnmarshalBinary decodes a struct hello_t from at least HelloTSize bytes.
// str must hold a NUL within its HelloStrSize bytes (C would print past it).
// Lang is taken as stored, even when it is not a known language.
func (h *Hello) UnmarshalBinary(b []byte) error {
	if len(b) < HelloTSize {
		return fmt.Errorf("hello_t: %d < %d bytes: %w", len(b), HelloTSize, ErrShortBuffer)
	}
	s, err := cStringStrict("hello_t.str", b[HelloStrOffset:HelloTSize])
	if err != nil {
		return err
	}
	*h = Hello{Lang: Lang(binary.LittleEndian.Uint32(b)), Str: s}
	return nil
}

// WriteHelloStr mirrors write_hello_str() on a hello_t image (at least
// HelloTSize bytes): it stores lang and copies HelloStrings[lang] into str
// the way strncpy(str, s, HELLO_STR_SIZE - 1) plus str[HELLO_STR_SIZE-1] = 0
// does, so all of str after the string is zero. lang must be LangEn or LangEs
// (C would index past hello_str[]).
func WriteHelloStr(b []byte, lang Lang) error {
	if len(b) < HelloTSize {
		return fmt.Errorf("hello_t: %d < %d bytes: %w", len(b), HelloTSize, ErrShortBuffer)
	}
	if lang >= LangNum {
		return fmt.Errorf("hello_t: unknown lang %d: %w", lang, ErrInvalid)
	}
	binary.LittleEndian.PutUint32(b, uint32(lang))
	str := b[HelloStrOffset:HelloTSize]
	n := copy(str, HelloStrings[lang])
	clear(str[n:])
	return nil
}

// Translate mirrors translate(): it prints TranslatingMsg to w (if w is not
// nil), then rewrites the hello_t image b with the next language
// (NextLang of the stored one) and returns that language. Persisting b is
// the caller's job (the C clients persist HELLO_T_SIZE bytes afterwards).
func Translate(w io.Writer, b []byte) (Lang, error) {
	if len(b) < HelloTSize {
		return 0, fmt.Errorf("hello_t: %d < %d bytes: %w", len(b), HelloTSize, ErrShortBuffer)
	}
	if w != nil {
		if _, err := io.WriteString(w, TranslatingMsg); err != nil {
			return 0, err
		}
	}
	lang := NextLang(Lang(binary.LittleEndian.Uint32(b)))
	return lang, WriteHelloStr(b, lang)
}

// InitHello mirrors init_hello() of common-hello.c, the initialisation
// callback the clients of 03/04/05/09/09scch pass to the signature check:
// it needs len(data) >= HelloTSize, writes the English greeting
// (WriteHelloStr(data, LangEn)) and returns HelloTSize, the number of bytes
// to persist. C prints "PMem has too small size (%zu < %zu)\n" and returns -1
// when data is too small; this returns an error (wrapping ErrShortBuffer)
// whose text contains the same words.
func InitHello(data []byte) (int, error) {
	if len(data) < HelloTSize {
		return 0, fmt.Errorf("init_hello: PMem has too small size (%d < %d): %w", len(data), HelloTSize, ErrShortBuffer)
	}
	if err := WriteHelloStr(data, LangEn); err != nil {
		return 0, err
	}
	return HelloTSize, nil
}

// HelloStr returns str of a hello_t image up to its first NUL (see
// UnmarshalBinary for the errors).
func HelloStr(b []byte) (string, error) {
	var h Hello
	if err := h.UnmarshalBinary(b); err != nil {
		return "", err
	}
	return h.Str, nil
}
