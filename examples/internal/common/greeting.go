// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-hello.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"errors"
	"io"
)

// TranslateHello mirrors the end of the clients of 03, 04, 05, 09 and
// 09scch ("translate the message so the next time it will be
// surprising"): it translates the hello_t in m.Data (Translate, printing
// TranslatingMsg to w), persists it on PMem and returns the new greeting,
// which the clients print as "Translation: <greeting>".
func TranslateHello(w io.Writer, m *Mem) (string, error) {
	if _, err := Translate(w, m.Data); err != nil {
		return "", err
	}
	if m.IsPMem {
		if err := m.Persist(m.DataOffset, HelloTSize); err != nil {
			return "", err
		}
	}
	return HelloStr(m.Data)
}

// OpenHello is OpenMem for the clients of 03, 04, 05, 09 and 09scch: their
// hello_t (Data), right after the signature at offset of <pmem-path>
// (initialised to "Hello world!" when the signature is missing, with
// common-hello.c's init_hello), or in DRAM ("Hello world!"). It returns the
// greeting in it too, which the clients print as "Next value: <greeting>".
func OpenHello(path string, offset int) (*Mem, string, error) {
	m, err := OpenMem(path, SignatureCheck{Offset: offset, Size: HelloTSize, Init: InitHello})
	if err != nil {
		return nil, "", err
	}
	str, err := HelloStr(m.Data)
	if err != nil {
		return nil, "", errors.Join(err, m.Close())
	}
	return m, str, nil
}
