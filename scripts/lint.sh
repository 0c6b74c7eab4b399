#!/usr/bin/env bash
# Static checks, run by `make lint` and as the first tier of `make test`:
# gofmt, go vet (with and without the vmhost and rpma_inject tags), staticcheck, the rule
# that only internal/ packages import "C", and builds without cgo and for
# other systems (the stubs must keep compiling).
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
fail() { echo "lint: $*"; status=1; }

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"
go vet ./... || fail "go vet"
go vet -tags vmhost ./... || fail "go vet -tags vmhost"
go vet -tags rpma_inject ./... || fail "go vet -tags rpma_inject"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... || fail "staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags rpma_inject ./internal/... || fail "staticcheck -tags rpma_inject"
cgo=$(go list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./... | grep -v '/internal/' || true)
[ -z "$cgo" ] || fail "\"C\" imported outside internal/: $cgo"
# Every package builds everywhere: without cgo (RDMA calls then return an
# error matching rpma.ErrNotSupported, which the test checks) and for
# other systems (only Linux has RDMA here; pmem.Alloc needs a Unix mmap).
# plan9 is the exception: its syscall package has no Errno, which
# rpma.OpError carries.
CGO_ENABLED=0 go build ./... || fail "build without cgo"
CGO_ENABLED=0 go test -count=1 -run '^TestNotSupported$' ./peer/ >/dev/null || fail "RDMA without cgo is not a clear ErrNotSupported"
for target in windows/amd64 darwin/arm64 freebsd/amd64 wasip1/wasm; do
	# vet builds the tests too, which a plain build would not.
	GOOS=${target%/*} GOARCH=${target#*/} go vet ./... || fail "build and vet for $target"
done
[ $status -eq 0 ] && echo "lint: ok"
exit $status
