#!/usr/bin/env bash
# Two-node latency benchmarks (`make bench`;
# doc/notes/performance-lab-notes.md, "Two nodes: completions from the
# wire"): in one two-node rxevm boot per kernel, C librpma's rpma_lat -s
# serves on node 0 and node 1 runs rounds of three clients of that one
# server, each connecting afresh: conn's
# BenchmarkOps with the posts' reaping on (the default), the same binary
# with it off (RPMA_BENCH_REAP=0), and rpma_lat -c. Completions come from the wire, later than the post (as on
# hardware), so reaping mostly finds nothing and backs off; the table shows
# what it costs (reap on/off) and Go against C, as medians of per-round
# ratios with their least and greatest.
#
# Everything is built on the host; the VMs only run. The order of the
# three clients turns from round to round so that none always runs first.
#
#   BENCH_KERNELS="6.12 6.1"  the kernels, one two-node boot at a time
#   BENCH_ITERS=50            iterations per run of each operation (a two-node
#                            operation takes milliseconds under TCG)
#   BENCH_ROUNDS=11           rounds of the three clients
#   BENCH_ROUND_BUDGET=270    seconds (on node 1) after which no round starts
#   BENCH_VM_TIMEOUT=6m       rxevm's timeout for each boot
#
# The raw outputs are kept in bin/bench-2node/KERNEL/. The exit status is
# non-zero when a boot fails or a row has no ratio.
set -uo pipefail

port=7400
ops='^BenchmarkOps$/^(Write64|Read64|Flush|WriteThenFlush64|WriteAndFlush64|AtomicWrite|Write64Wait)$'

# server OUT BIN: node 0. Serves until node 1 writes OUT/done.
server() {
	local out=$1 bin=$2 pid
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	"$bin/rpma_lat" -s -t 900 -p "$port" "$ip" >"$out/server.txt" 2>"$out/server.err" &
	pid=$!
	for _ in $(seq 1 100); do
		grep -q serving "$out/server.txt" 2>/dev/null && break
		sleep 0.2
	done
	if grep -q serving "$out/server.txt"; then
		touch "$out/ready"
	else
		echo "server: rpma_lat -s did not start" | tee -a "$out/errors.txt" >&2
		touch "$out/server-failed"
	fi
	while [ ! -e "$out/done" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.5
	done
	kill "$pid" 2>/dev/null
	wait "$pid"
	return 0
}

# client OUT BIN: node 1. Runs the rounds, then writes OUT/done.
client() {
	local out=$1 bin=$2
	local n=${BENCH_ITERS:-50} rounds=${BENCH_ROUNDS:-11} budget=${BENCH_ROUND_BUDGET:-270}
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM} peer=${RPMA_TEST_PEER_IP:?}
	mark() { echo "${SECONDS}s $*" >>"$out/timing.txt"; }
	# shellcheck disable=SC2064 # out is local: expand it now
	trap "touch '$out/done'" EXIT
	local ok=0
	for _ in $(seq 1 240); do
		[ -e "$out/ready" ] && ok=1 && break
		[ -e "$out/server-failed" ] && break
		sleep 0.25
	done
	if [ $ok -eq 0 ]; then
		echo "client: the server never got ready" | tee -a "$out/errors.txt" >&2
		return 1
	fi
	{
		echo "kernel: $(uname -r), $(nproc) vCPUs per node, two nodes, qemu TCG"
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "iterations per run: $n"
	} >>"$out/meta.txt"
	local r rc step d status=0
	for r in $(seq 1 "$rounds"); do
		if [ "$r" -gt 1 ] && [ "$SECONDS" -gt "$budget" ]; then
			echo "rounds: $((r - 1)) of $rounds (the rest skipped: over the ${budget}s budget)" >>"$out/meta.txt"
			break
		fi
		d=$out/round-$r
		mkdir -p "$d"
		local order=(go-reap go-noreap c)
		case $((r % 3)) in
		2) order=(go-noreap c go-reap) ;;
		0) order=(c go-reap go-noreap) ;;
		esac
		for step in "${order[@]}"; do
			mark "round $r: $step"
			case $step in
			go-reap | go-noreap)
				local reap=1
				[ "$step" = go-noreap ] && reap=0
				RPMA_BENCH_SERVER="$peer:$port" RPMA_BENCH_REAP=$reap timeout -k 5 120 \
					"$bin/conn.test" -test.run '^$' -test.bench "$ops" -test.benchtime "${n}x" \
					-test.count 1 >"$d/$step.txt" 2>"$d/$step.err"
				;;
			c)
				timeout -k 5 120 "$bin/rpma_lat" -c "$peer" -p "$port" -n "$n" -t 110 "$ip" \
					>"$d/c.txt" 2>"$d/c.err"
				;;
			esac
			rc=$?
			if [ $rc -ne 0 ]; then
				echo "round $r, $step: exit status $rc" | tee -a "$out/errors.txt" >&2
				status=1
			fi
		done
	done
	mark end
	return $status
}

case "${1:-}" in
--server)
	server "$2" "$3"
	exit
	;;
--client)
	client "$2" "$3"
	exit
	;;
esac

cd "$(dirname "$0")/.." || exit 1
root=$PWD
kernels=${BENCH_KERNELS:-6.12 6.1}
go build -o bin/rxevm ./cmd/rxevm || exit 1
go build -o bin/pairtable ./internal/bench/cmd/pairtable || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-bench2.XXXXXX") || exit 1 # shared with both VMs
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_lat" internal/bench/testdata/rpma_lat.c -lrpma || exit 1

status=0
for k in $kernels; do
	out=$work/$k
	mkdir -p "$out"
	echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)" >"$out/meta.txt"
	echo "=== bench-2node: kernel $k"
	start=$SECONDS
	(cd conn && "$root/bin/rxevm" -nodes 2 -kernel "$k" -timeout "${BENCH_VM_TIMEOUT:-6m}" -- \
		bash "$root/scripts/bench-2node.sh" --server "$out" "$work" :: \
		bash "$root/scripts/bench-2node.sh" --client "$out" "$work") || {
		echo "bench-2node: the boot for kernel $k failed (exit status $?)" >&2
		status=1
	}
	echo "=== bench-2node: kernel $k took $((SECONDS - start))s"
	cat "$out/meta.txt"
	bin/pairtable "$out" || status=1
	rm -rf "bin/bench-2node/$k"
	mkdir -p bin/bench-2node
	cp -r "$out" "bin/bench-2node/$k"
	echo
done
echo "raw outputs: bin/bench-2node/"
exit $status
