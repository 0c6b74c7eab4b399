#!/usr/bin/env bash
# Static checks, run by `make lint` and as the first tier of `make test`:
# gofmt, go vet (with and without the vmhost tag), staticcheck, the rule
# that only internal/ packages import "C", and builds without cgo and for
# another OS (the stubs must keep compiling).
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
fail() { echo "lint: $*"; status=1; }

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"
go vet ./... || fail "go vet"
go vet -tags vmhost ./... || fail "go vet -tags vmhost"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... || fail "staticcheck"
cgo=$(go list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./... | grep -v '/internal/' || true)
[ -z "$cgo" ] || fail "\"C\" imported outside internal/: $cgo"
CGO_ENABLED=0 go build ./... || fail "build without cgo"
GOOS=darwin go build ./... || fail "build for darwin"
[ $status -eq 0 ] && echo "lint: ok"
exit $status
