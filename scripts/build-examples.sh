#!/usr/bin/env bash
# Builds every bundled example into bin/examples (or the directory given
# as the first argument): examples/NAME/main.go as NAME,
# examples/NAME/{server,client}/main.go as NAME-server, NAME-client.
# Used by `make demo` and by `make test` before the VM tiers (the examples'
# integration test runs the binaries inside the VM, from $RPMA_EXAMPLES_BIN
# or bin/examples); go build sees the caller's GOFLAGS and CGO_CFLAGS.
# RPMA_EXAMPLES_RACE names examples (space-separated) to build with the
# race detector: make test builds durable-log so, whose goroutines share
# one connection.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/examples}
mkdir -p "$bin"
for d in examples/*/; do
	name=$(basename "$d")
	[ "$name" = internal ] && continue
	flags=()
	case " ${RPMA_EXAMPLES_RACE:-} " in *" $name "*) flags=(-race) ;; esac
	if [ -f "$d/main.go" ]; then
		go build "${flags[@]}" -o "$bin/$name" "./$d"
	fi
	for side in server client; do
		if [ -f "$d/$side/main.go" ]; then
			go build "${flags[@]}" -o "$bin/$name-$side" "./$d/$side"
		fi
	done
done
