// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/07-atomic-write/server.c
//   examples/07-atomic-write/client.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// The remote log of librpma's example 07-atomic-write (server.c):
//
//	struct log {
//		char signature[LOG_SIGNATURE_SIZE];	// @0,  8 B: "LOG\0\0\0\0\0" (PMem only)
//		uint64_t used;				// @8,  8 B: little-endian offset of the
//							//      end of the valid data, from the
//							//      start of the struct
//		char data[LOG_DATA_SIZE];		// @16, 1024 B: NUL-terminated words
//	};
//
// The server exposes the whole struct (or the whole mapped file) with
// data_offset = offsetof(struct log, used) = 8. For each word the client
// writes the word plus its NUL at `used` and flushes it, then atomically
// writes the new `used` (8 bytes, rpma_atomic_write) at data_offset and
// flushes that; the server then prints data[0 : used-16] with every NUL
// turned into a newline.
const (
	// LogSignature mirrors LOG_HDR_SIGNATURE: just "LOG" (not "RPMA_LOG").
	LogSignature = "LOG"
	// LogSignatureSize mirrors LOG_SIGNATURE_SIZE: the field is 8 bytes,
	// written with strncpy, so "LOG" plus five NULs.
	LogSignatureSize = 8
	// LogDataSize mirrors LOG_DATA_SIZE.
	LogDataSize = 1024
	// LogUsedOffset is offsetof(struct log, used), sent as
	// common_data.data_offset; 8-byte aligned as rpma_atomic_write needs.
	LogUsedOffset = 8
	// LogDataOffset is offsetof(struct log, data), the initial value of
	// used.
	LogDataOffset = 16
	// LogSize mirrors LOG_SIZE (sizeof(struct log)).
	LogSize = LogDataOffset + LogDataSize
	// LogMaxWordLength mirrors MAX_WORD_LENGTH (KILOBYTE - 1) of 07's
	// client: longer words are cut (strncpy) to this many bytes.
	LogMaxWordLength = Kilobyte - 1
)

// LogHasSignature reports whether mem starts with the log signature as the C
// server tests it: strncmp(mem, "LOG", 8) == 0, i.e. the first 4 bytes are
// "LOG\0" (the bytes after the NUL are not compared).
func LogHasSignature(mem []byte) bool {
	return len(mem) >= len(LogSignature)+1 &&
		string(mem[:len(LogSignature)]) == LogSignature && mem[len(LogSignature)] == 0
}

// InitLog mirrors 07's server preparing a PMem log (mem is the whole
// mapping, at least LogSize bytes): if LogHasSignature(mem) it does nothing
// and reports false; otherwise, in this order, it sets used = LogDataOffset,
// persists those 8 bytes (offset LogUsedOffset), writes "LOG" plus five
// NULs over the signature field and persists those 8 bytes (offset 0), and
// reports true. The data bytes are left as they are.
func InitLog(mem []byte, persist PersistFunc) (bool, error) {
	if len(mem) < LogSize {
		return false, fmt.Errorf("log: mapping %d < %d bytes: %w", len(mem), LogSize, ErrShortBuffer)
	}
	if LogHasSignature(mem) {
		return false, nil
	}
	binary.LittleEndian.PutUint64(mem[LogUsedOffset:], LogDataOffset)
	if persist != nil {
		if err := persist(LogUsedOffset, 8); err != nil {
			return false, fmt.Errorf("log: persist used: %w", err)
		}
	}
	Strncpy(mem[:LogSignatureSize], LogSignature, LogSignatureSize)
	if persist != nil {
		if err := persist(0, LogSignatureSize); err != nil {
			return false, fmt.Errorf("log: persist signature: %w", err)
		}
	}
	return true, nil
}

// ResetLog mirrors 07's server preparing a DRAM log: used = LogDataOffset,
// and nothing else (no signature; the buffer is zeroed by the allocation).
func ResetLog(mem []byte) error {
	return SetLogUsed(mem, LogDataOffset)
}

// LogUsed returns the used field.
func LogUsed(mem []byte) (uint64, error) {
	if len(mem) < LogUsedOffset+8 {
		return 0, fmt.Errorf("log: %d bytes, used needs %d: %w", len(mem), LogUsedOffset+8, ErrShortBuffer)
	}
	return binary.LittleEndian.Uint64(mem[LogUsedOffset:]), nil
}

// SetLogUsed stores the used field.
func SetLogUsed(mem []byte, used uint64) error {
	if len(mem) < LogUsedOffset+8 {
		return fmt.Errorf("log: %d bytes, used needs %d: %w", len(mem), LogUsedOffset+8, ErrShortBuffer)
	}
	binary.LittleEndian.PutUint64(mem[LogUsedOffset:], used)
	return nil
}

// EncodeUsed returns the 8 bytes 07's client hands rpma_atomic_write for
// the new used value (host order, little-endian).
func EncodeUsed(used uint64) [8]byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], used)
	return b
}

// LogWord returns the bytes 07's client writes for one word: the word cut
// to LogMaxWordLength bytes (and at an embedded NUL, as strncpy would),
// followed by its terminating NUL (word_size = strlen + 1 bytes).
func LogWord(word string) []byte {
	if i := strings.IndexByte(word, 0); i >= 0 {
		word = word[:i]
	}
	if len(word) > LogMaxWordLength {
		word = word[:LogMaxWordLength]
	}
	return append([]byte(word), 0)
}

// AppendLogWord applies to a local log image what one iteration of 07's
// client does remotely: it writes LogWord(word) at used and stores the new
// used. It fails, leaving mem untouched, if used is below LogDataOffset or
// the word would end past mem (the C client only checks, once, that the
// remote region is larger than used; a word running past the region fails
// there with a remote access error).
func AppendLogWord(mem []byte, word string) (uint64, error) {
	used, err := LogUsed(mem)
	if err != nil {
		return 0, err
	}
	w := LogWord(word)
	if used < LogDataOffset || used > uint64(len(mem)) || uint64(len(w)) > uint64(len(mem))-used {
		return 0, fmt.Errorf("log: word of %d bytes at used %d does not fit %d bytes: %w", len(w), used, len(mem), ErrShortBuffer)
	}
	copy(mem[used:], w)
	used += uint64(len(w))
	binary.LittleEndian.PutUint64(mem[LogUsedOffset:], used)
	return used, nil
}

// LogContents returns data[0 : used-LogDataOffset], the valid part of the
// log (a copy). A used below LogDataOffset gives nothing (the C server's
// print loop does not run); a used past mem is an error (C would read past
// the buffer).
func LogContents(mem []byte) ([]byte, error) {
	used, err := LogUsed(mem)
	if err != nil {
		return nil, err
	}
	if used > uint64(len(mem)) {
		return nil, fmt.Errorf("log: used %d beyond %d bytes: %w", used, len(mem), ErrInvalid)
	}
	if used <= LogDataOffset {
		return []byte{}, nil
	}
	return bytes.Clone(mem[LogDataOffset:used]), nil
}

// LogPrint returns exactly what 07's server prints to stdout after the
// client disconnects: LogContents with each NUL replaced by '\n' (so
// "1st_word\n2nd_word\n" for two words).
func LogPrint(mem []byte) (string, error) {
	c, err := LogContents(mem)
	if err != nil {
		return "", err
	}
	return string(bytes.ReplaceAll(c, []byte{0}, []byte{'\n'})), nil
}

// LogWords splits LogContents into the NUL-terminated words; bytes after
// the last NUL (only possible with a torn log) are returned as a last word.
func LogWords(mem []byte) ([]string, error) {
	c, err := LogContents(mem)
	if err != nil {
		return nil, err
	}
	var words []string
	for len(c) > 0 {
		i := bytes.IndexByte(c, 0)
		if i < 0 {
			words = append(words, string(c))
			break
		}
		words = append(words, string(c[:i]))
		c = c[i+1:]
	}
	return words, nil
}
