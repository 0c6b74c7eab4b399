#!/usr/bin/env bash
# Many connections (doc/performance.md, "Bandwidth and message size";
# doc/notes/performance-lab-notes.md, "Many connections"): aggregate
# QD1 64-byte write rate and memory per connection with N = 1, 16, 64 and
# 256 connections on one server, Go (conn's BenchmarkScale) against C
# librpma (internal/bench/testdata/rpma_scale.c), in one rxe VM per
# kernel, then one Markdown table per kernel (internal/bench/cmd/scaletable).
#
# Everything is built on the host; the VM only runs. In each round every N
# runs once in Go and once in C, in alternation, each in a fresh process
# (in one process a later N would reuse memory an earlier one freed, which
# would shrink its memory figure), each under timeout. Rounds go on until
# BENCH_ROUNDS or the budget.
#
#   BENCH_KERNELS="6.12 6.1"   the VMs' kernels, one VM at a time
#   BENCH_ITERS=5000           completed writes per run (all connections)
#   BENCH_ROUNDS=11            rounds at most
#   BENCH_ROUND_BUDGET=270     seconds (in the VM) after which no round starts
#   BENCH_VM_TIMEOUT=8m        rxevm's timeout for each VM
#
# About 25 s a round on a quiet 2-core host. Raw outputs in
# bin/bench/scale-KERNEL/ (go-R.txt, c-R.txt, *.err, meta.txt, table.md).
# The exit status is non-zero when a VM or a figure is missing.
set -uo pipefail

conns="1 16 64 256"

# guest OUT BIN: runs inside the VM; writes OUT/go-R.txt and OUT/c-R.txt
# for each round R from BIN/conn.test and BIN/rpma_scale.
guest() {
	local out=$1 bin=$2
	local n=${BENCH_ITERS:-5000} rounds=${BENCH_ROUNDS:-11} budget=${BENCH_ROUND_BUDGET:-270}
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	{
		echo "kernel: $(uname -r), $(nproc) vCPUs, qemu TCG, $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "completed writes per run: $n"
	} >>"$out/meta.txt"
	local r c rc port=7400
	for r in $(seq 1 "$rounds"); do
		if [ "$r" -gt 1 ] && [ "$SECONDS" -gt "$budget" ]; then
			echo "rounds: $((r - 1)) of $rounds (the rest skipped: over the ${budget}s budget)" >>"$out/meta.txt"
			break
		fi
		echo "${SECONDS}s round $r" >>"$out/timing.txt"
		# Odd rounds run Go first, even rounds C: neither always runs
		# first, on a cold cache, or right after the other's teardown.
		local order="go c" side
		((r % 2 == 0)) && order="c go"
		for c in $conns; do
			for side in $order; do
				if [ "$side" = go ]; then
					timeout -k 5 120 "$bin/conn.test" -test.run '^$' -test.bench "BenchmarkScale/Conns$c\$" \
						-test.benchtime "${n}x" -test.count 1 >>"$out/go-$r.txt" 2>>"$out/go.err"
					rc=$?
					[ $rc -eq 0 ] || echo "go Conns$c, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
					continue
				fi
				port=$((port + 1))
				timeout -k 5 120 "$bin/rpma_scale" -c "$c" -n "$n" -t 110 -p "$port" "$ip" \
					>>"$out/c-$r.txt" 2>>"$out/c.err"
				rc=$?
				[ $rc -eq 0 ] || echo "rpma_scale -c $c, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
			done
		done
	done
	echo "${SECONDS}s end" >>"$out/timing.txt"
	return 0
}

if [ "${1:-}" = --guest ]; then
	guest "$2" "$3"
	exit
fi

cd "$(dirname "$0")/.." || exit 1
root=$PWD
kernels=${BENCH_KERNELS:-6.12 6.1}
go build -o bin/rxevm ./cmd/rxevm || exit 1
go build -o bin/scaletable ./internal/bench/cmd/scaletable || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-bench-scale.XXXXXX") || exit 1 # shared with the VM
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_scale" internal/bench/testdata/rpma_scale.c -lrpma || exit 1

status=0
for k in $kernels; do
	out=$work/scale-$k
	mkdir -p "$out"
	echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)" >"$out/meta.txt"
	echo "=== bench-scale: kernel $k"
	start=$SECONDS
	(cd conn && "$root/bin/rxevm" -kernel "$k" -timeout "${BENCH_VM_TIMEOUT:-8m}" -- \
		bash "$root/scripts/bench-scale.sh" --guest "$out" "$work") || {
		echo "bench-scale: the VM for kernel $k failed (exit status $?)" >&2
		status=1
	}
	echo "=== bench-scale: kernel $k took $((SECONDS - start))s"
	sed 's/^/- /' "$out/meta.txt"
	bin/scaletable "$out" | tee "$out/table.md" || status=1
	rm -rf "bin/bench/scale-$k"
	mkdir -p bin/bench
	cp -r "$out" "bin/bench/scale-$k"
	echo
done
echo "raw outputs: bin/bench/scale-*/"
exit $status
