// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2026, The gorpma authors
//
// See LICENSE at the root of github.com/gorpma/rpma.

package common

// GlibcRand reproduces glibc's srand()/rand() (random_r.c, the default
// TYPE_3 additive feedback generator: degree 31, separation 3), so a Go
// example picks the same values as a C one for the same seed. 06's client
// uses it to pick its name.
//
// For seed 1 (and 0, which glibc turns into 1) the first values are
// 1804289383, 846930886, 1681692777.
type GlibcRand struct {
	state [glibcRandDeg]int32
	f, r  int // indices of glibc's fptr and rptr into state
}

const (
	glibcRandDeg = 31
	glibcRandSep = 3
)

// NewGlibcRand returns the generator as srand(seed) leaves it.
func NewGlibcRand(seed uint32) *GlibcRand {
	g := new(GlibcRand)
	g.Seed(seed)
	return g
}

// Seed mirrors srand(seed).
func (g *GlibcRand) Seed(seed uint32) {
	if seed == 0 {
		seed = 1
	}
	g.state[0] = int32(seed)
	word := int32(seed)
	for i := 1; i < glibcRandDeg; i++ {
		// state[i] = (16807 * state[i-1]) % 2147483647 without overflow,
		// with C's truncating division (Go's is the same).
		hi := int64(word) / 127773
		lo := int64(word) % 127773
		w := 16807*lo - 2836*hi
		if w < 0 {
			w += 2147483647
		}
		word = int32(w)
		g.state[i] = word
	}
	g.f, g.r = glibcRandSep, 0
	for i := 0; i < 10*glibcRandDeg; i++ {
		g.Rand()
	}
}

// Rand mirrors rand(): a value in [0, RAND_MAX] = [0, 2^31-1].
func (g *GlibcRand) Rand() int32 {
	v := uint32(g.state[g.f]) + uint32(g.state[g.r])
	g.state[g.f] = int32(v)
	g.f++
	g.r++
	if g.f >= glibcRandDeg {
		g.f = 0
	} else if g.r >= glibcRandDeg {
		g.r = 0
	}
	return int32(v >> 1)
}
