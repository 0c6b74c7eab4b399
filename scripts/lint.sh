#!/usr/bin/env bash
# Static checks, run by `make lint` and as the first tier of `make test`:
# gofmt, go vet (with and without the vmhost, rpma_inject and rpma_fake tags), staticcheck, the rule
# that only internal/ packages import "C", builds without cgo and for
# other systems (the stubs must keep compiling), over every module of the
# workspace; shellcheck over the scripts.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
status=0
fail() { echo "lint: $*"; status=1; }
source scripts/workspace.sh # workspace_pkgs: ./... ./examples/... and the tools'

mapfile -t gofiles < <(git ls-files '*.go' 2>/dev/null || find . -name '*.go')
unformatted=$(gofmt -l "${gofiles[@]}")
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"
go vet "${workspace_pkgs[@]}" || fail "go vet"
go vet -tags vmhost "${workspace_pkgs[@]}" || fail "go vet -tags vmhost"
go vet -tags rpma_inject "${workspace_pkgs[@]}" || fail "go vet -tags rpma_inject"
# The fake verbs layer (internal/ibv/fake*.go) replaces the cgo files with
# and without cgo; only ibv and core have code of their own in that build.
go vet -tags rpma_fake "${workspace_pkgs[@]}" || fail "go vet -tags rpma_fake"
CGO_ENABLED=0 go vet -tags rpma_fake ./internal/ibv/ ./internal/core/ || fail "go vet -tags rpma_fake without cgo"
go vet -tags rpma_stubnic ./internal/ibv/ ./internal/core/ || fail "go vet -tags rpma_stubnic"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 "${workspace_pkgs[@]}" || fail "staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags rpma_inject ./internal/... || fail "staticcheck -tags rpma_inject"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags rpma_fake ./internal/ibv/ ./internal/core/ || fail "staticcheck -tags rpma_fake"
cgo=$(go list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' "${workspace_pkgs[@]}" | grep -v '/internal/' || true)
[ -z "$cgo" ] || fail "\"C\" imported outside internal/: $cgo"
# Every package builds everywhere: without cgo (RDMA calls then return an
# error matching rpma.ErrNotSupported, which the test checks) and for
# other systems (only Linux has RDMA here; pmem.Alloc needs a Unix mmap).
# plan9 is the exception: its syscall package has no Errno, which
# rpma.OpError carries.
CGO_ENABLED=0 go build "${workspace_pkgs[@]}" || fail "build without cgo"
CGO_ENABLED=0 go test -count=1 -run '^TestNotSupported$' ./peer/ >/dev/null || fail "RDMA without cgo is not a clear ErrNotSupported"
for target in windows/amd64 darwin/arm64 freebsd/amd64 wasip1/wasm; do
	# vet builds the tests too, which a plain build would not.
	GOOS=${target%/*} GOARCH=${target#*/} go vet "${workspace_pkgs[@]}" || fail "build and vet for $target"
done
# Each module's go.mod requires only what it imports (the library's: zap,
# go-multierror, testify, x/sys and theirs; internal/gomod checks that).
for pkg in "${workspace_pkgs[@]}"; do
	dir=${pkg%/...}
	(cd "$dir" && GOWORK=off go mod tidy -diff >/dev/null) || fail "$dir/go.mod or go.sum is not tidy (cd $dir && GOWORK=off go mod tidy)"
done
# scripts/setup.sh installs shellcheck; its settings: .shellcheckrc.
if command -v shellcheck >/dev/null; then
	shellcheck scripts/*.sh .ci/run || fail "shellcheck"
else
	fail "shellcheck is not installed (make setup installs it)"
fi
[ $status -eq 0 ] && echo "lint: ok"
exit $status
