// Package gomod holds no code: its test checks that the library's module
// stays lean. Its go.mod requires only what the library's packages import
// (zap, go-multierror, testify, x/sys, and what those need); the examples
// and the benchmark plotting, which need protobuf and gonum/plot, are
// modules of their own, joined to the library by go.work at the root so
// that make demo, make test and make bench build them from this clone.
package gomod
