#!/usr/bin/env bash
# Runs every built example where the RDMA device is (inside the VM, or on
# an RDMA host): pairs start the server, then the client, and pass when
# both exit 0. Ends with `examples: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
ip=${1:-${RPMA_TEST_IP:?no address: pass one or run inside rxevm}}
port=${RPMA_DEMO_PORT:-7204}
bin=bin/examples
passed=0
failed=0

result() { # name rc
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		echo "--- ok   $1"
	else
		failed=$((failed + 1))
		echo "--- FAIL $1 (exit $2)"
	fi
}

# run_pair NAME SERVER_CMD... -- CLIENT_CMD...: the server in the
# background, the client once the server listens, both bounded in time.
run_pair() {
	local name=$1
	shift
	local server=() client=()
	while [ "$1" != "--" ]; do server+=("$1"); shift; done
	shift
	client=("$@")
	echo "=== $name"
	timeout 120 "${server[@]}" > >(sed 's/^/[server] /') 2>&1 &
	local spid=$!
	sleep 1
	timeout 120 "${client[@]}" 2>&1 | sed 's/^/[client] /'
	local crc=${PIPESTATUS[0]}
	wait $spid
	local src=$?
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ]
	result "$name" $?
}

run_single() { # NAME CMD...
	local name=$1
	shift
	echo "=== $name"
	timeout 120 "$@" 2>&1 | sed 's/^/  /'
	result "$name" "${PIPESTATUS[0]}"
}

if [ -x "$bin/devinfo" ]; then
	run_single devinfo "$bin/devinfo"
fi
run_pair rping rping -s -a "$ip" -p "$port" -C 3 -- rping -c -a "$ip" -p "$port" -C 3 -v

echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
