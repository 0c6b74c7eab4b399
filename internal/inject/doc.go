// Package inject holds the fault-injection replay (issue 13): with the
// build tag rpma_inject, every libibverbs and librdmacm call site of
// internal/ibv, and the libc calls internal/core makes from Go, can be
// made to fail at its k-th occurrence (see package ibv). The replay runs
// each public sequence (device and peer; memory registration; listen,
// accept, reject; connect; the data path, its waits and its memory
// windows; SRQ; every Close) once to record the points it reaches, then
// fails each point in turn and checks that the sequence returns an error
// of the right rpma kind naming the failed call and its errno, leaks no
// object, fd or C object, leaves every object closable (a failed Close
// succeeds when retried), and that a fresh run then succeeds.
//
// It runs in the VM tiers of make test, on both kernels:
//
//	go test -tags rpma_inject -exec 'bin/rxevm --' ./internal/inject/
//
// and prints one line
//
//	inject: sites=S covered=C excluded=E points=P
//
// with every excluded site and its reason. The package has no code of its
// own; normal builds see only this file.
package inject
