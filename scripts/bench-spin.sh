#!/usr/bin/env bash
# The spin before a park and lazy arming (internal/core/spin.go), measured:
# conn's BenchmarkOps rows Write64, Write64Wait and Write64WaitThread with
# the spin on (RPMA_BENCH_SPIN unset, or BENCH_SPIN as its limit) and off
# (RPMA_BENCH_SPIN=0), and C librpma's rpma_lat -o Write64Wait, in an
# order that rotates each round, in one rxe VM per kernel (two vCPUs, not
# pinned: with one CPU the spin is off by design); then system calls per
# operation (RPMA_BENCH_SYSCALLS=1) of both Go runs, three times.
# scripts/spin-table.py prints the table (doc/notes/performance-lab-notes.md,
# "Event mode: the spin and lazy arming").
#
#   bash scripts/bench-spin.sh
#
#   BENCH_KERNELS="6.1 6.12"  the VMs' kernels, one VM at a time
#   BENCH_ROUNDS=21           rounds
#   BENCH_ITERS=1000          operations per run, after 500 of warm-up
#   BENCH_SPIN=               the spin's limit when on (a Go duration,
#                             e.g. 1ms); empty: the default, 50us
#
# Raw outputs: bin/bench/spin-KERNEL/{on,off,c,sys-on,sys-off}.txt.

set -uo pipefail

# guest OUT BIN: runs inside the VM.
guest() {
	local out=$1 bin=$2 n=${BENCH_ITERS:-1000} rounds=${BENCH_ROUNDS:-21} spin=${BENCH_SPIN:-}
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	local rows='^BenchmarkOps$/^(Write64|Write64Wait|Write64WaitThread)$' r i step
	local on=(env RPMA_BENCH_WARMUP=500) off=(env RPMA_BENCH_WARMUP=500 RPMA_BENCH_SPIN=0)
	[ -z "$spin" ] || on+=(RPMA_BENCH_SPIN="$spin")
	echo "kernel $(uname -r), $(nproc) vCPUs; spin limit ${spin:-default}" >"$out/meta.txt"
	for r in $(seq 1 "$rounds"); do
		echo "# round $r" | tee -a "$out/on.txt" "$out/off.txt" >>"$out/c.txt"
		local steps=(on off c)
		for i in 0 1 2; do
			step=${steps[$(((r + i) % 3))]}
			case $step in
			on) timeout -k 5 300 "${on[@]}" "$bin/conn.test" -test.run '^$' -test.bench "$rows" -test.benchtime "${n}x" >>"$out/on.txt" 2>>"$out/err.txt" ;;
			off) timeout -k 5 300 "${off[@]}" "$bin/conn.test" -test.run '^$' -test.bench "$rows" -test.benchtime "${n}x" >>"$out/off.txt" 2>>"$out/err.txt" ;;
			c) timeout -k 5 300 "$bin/rpma_lat" -n "$n" -w 500 -t 290 -p $((7300 + r)) -o Write64Wait "$ip" >>"$out/c.txt" 2>>"$out/err.txt" ;;
			esac || echo "$step, round $r: exit status $?" >>"$out/errors.txt"
		done
	done
	for r in 1 2 3; do
		echo "# sys $r" | tee -a "$out/sys-on.txt" >>"$out/sys-off.txt"
		timeout -k 5 300 "${on[@]}" RPMA_BENCH_SYSCALLS=1 "$bin/conn.test" -test.run '^$' -test.bench "$rows" -test.benchtime 2000x >>"$out/sys-on.txt" 2>>"$out/err.txt"
		timeout -k 5 300 "${off[@]}" RPMA_BENCH_SYSCALLS=1 "$bin/conn.test" -test.run '^$' -test.bench "$rows" -test.benchtime 2000x >>"$out/sys-off.txt" 2>>"$out/err.txt"
	done
	return 0
}

if [ "${1:-}" = --guest ]; then
	guest "$2" "$3"
	exit
fi

cd "$(dirname "$0")/.." || exit 1
root=$PWD
go build -o bin/rxevm ./cmd/rxevm || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-spin.XXXXXX") || exit 1 # shared with the VM
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_lat" internal/bench/testdata/rpma_lat.c -lrpma || exit 1
status=0
for k in ${BENCH_KERNELS:-6.1 6.12}; do
	out=$work/$k
	mkdir -p "$out"
	echo "=== bench-spin: kernel $k"
	(cd conn && "$root/bin/rxevm" -kernel "$k" -timeout "${BENCH_VM_TIMEOUT:-30m}" -- \
		bash "$root/scripts/bench-spin.sh" --guest "$out" "$work") || {
		echo "bench-spin: the VM for kernel $k failed" >&2
		status=1
	}
	rm -rf "bin/bench/spin-$k"
	mkdir -p bin/bench
	cp -r "$out" "bin/bench/spin-$k"
	python3 scripts/spin-table.py "bin/bench/spin-$k" || status=1
done
exit $status
