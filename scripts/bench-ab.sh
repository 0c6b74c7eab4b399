#!/usr/bin/env bash
# A/B latency benchmark of a change to the library (doc/performance.md,
# "Reproducing"): conn's BenchmarkOps and BenchmarkPostUnsignaled built at a
# base revision (A) and from the working tree (B), and C librpma's
# rpma_lat (C), in one rxe VM per kernel. Each round runs the three, one
# after the other, in an order that rotates from round to round (so that
# no program always follows the same one); then bin/abtable prints, per
# kernel and operation, B/A and each over librpma as medians of per-round
# ratios of the means, with how many rounds B was faster and the spread.
# A change worth a few percent needs many rounds under TCG: spreads of
# 0.5-2 within one boot are common.
#
#   bash scripts/bench-ab.sh REV     REV: the base, e.g. HEAD or HEAD~1
#
#   BENCH_KERNELS="6.1"       the VMs' kernels, one VM at a time
#   BENCH_ITERS=3000          iterations per run of each operation
#   BENCH_ROUNDS=15           rounds
#   BENCH_WARMUP=500          operations before each timed loop, in Go
#                            and in rpma_lat (as scripts/bench.sh)
#   BENCH_VM_TIMEOUT=30m      rxevm's timeout for each VM
#   BENCH_ONLY="Write64 Write64Wait"  these rows of BenchmarkOps only (and
#                            rpma_lat -o for each); default: every row and
#                            BenchmarkPostUnsignaled
#   BENCH_ICOUNT=1            count instead of time: rxevm -icount, one vCPU,
#                            ns/op is guest instructions per operation and
#                            an A/A run gives 1.00 (doc/performance.md,
#                            "What it was measured on")
#
# The raw outputs are kept in bin/bench/ab-KERNEL/{a,b,c}.txt. The exit
# status is non-zero when a VM or a table is missing.
set -uo pipefail

# guest OUT BIN: runs inside the VM; appends to OUT/{a,b,c}.txt from the
# binaries BIN/a.test, BIN/b.test and BIN/rpma_lat.
guest() {
	local out=$1 bin=$2 n=${BENCH_ITERS:-3000} rounds=${BENCH_ROUNDS:-15} w=${BENCH_WARMUP:-500}
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	local r i prog rc op only=${BENCH_ONLY:-} gore='^(BenchmarkOps|BenchmarkPostUnsignaled)$'
	[ -z "$only" ] || gore="^BenchmarkOps\$/^(${only// /|})\$"
	for r in $(seq 1 "$rounds"); do
		for i in 0 1 2; do
			case $(((r + i) % 3)) in
			0) prog=a ;;
			1) prog=b ;;
			*) prog=c ;;
			esac
			echo "# round $r" >>"$out/$prog.txt"
			if [ $prog = c ]; then
				rc=0
				for op in ${only:-all}; do
					local oarg=(-o "$op")
					[ "$op" != all ] || oarg=()
					timeout -k 5 300 "$bin/rpma_lat" -n "$n" -w "$w" -t 290 -p $((7300 + r)) "${oarg[@]}" "$ip" >>"$out/c.txt" 2>>"$out/c.err" || rc=$?
				done
			else
				timeout -k 5 300 env RPMA_BENCH_WARMUP="$w" "$bin/$prog.test" -test.run '^$' -test.bench "$gore" \
					-test.benchtime "${n}x" -test.count 1 >>"$out/$prog.txt" 2>>"$out/$prog.err"
				rc=$?
			fi
			[ $rc -eq 0 ] || echo "$prog, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
		done
	done
	return 0
}

if [ "${1:-}" = --guest ]; then
	guest "$2" "$3"
	exit
fi

if [ $# -ne 1 ]; then
	echo "usage: bash scripts/bench-ab.sh REV" >&2
	exit 2
fi
cd "$(dirname "$0")/.." || exit 1
root=$PWD
base=$(git rev-parse --verify "$1^{commit}") || exit 1
kernels=${BENCH_KERNELS:-6.1}
go build -o bin/rxevm ./cmd/rxevm || exit 1
icount=()
[ "${BENCH_ICOUNT:-0}" = 1 ] && icount=(-icount)
go build -o bin/abtable ./internal/bench/cmd/abtable || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-ab.XXXXXX") || exit 1 # shared with the VM
trap 'git worktree remove --force "$work/base" 2>/dev/null; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$base" >/dev/null || exit 1
(cd "$work/base" && go test -c -o "$work/a.test" ./conn) || exit 1
go test -c -o "$work/b.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_lat" internal/bench/testdata/rpma_lat.c -lrpma || exit 1

status=0
for k in $kernels; do
	out=$work/$k
	mkdir -p "$out"
	echo "=== bench-ab: kernel $k, A = $base, B = the working tree"
	start=$SECONDS
	(cd conn && "$root/bin/rxevm" "${icount[@]}" -kernel "$k" -timeout "${BENCH_VM_TIMEOUT:-30m}" -- \
		bash "$root/scripts/bench-ab.sh" --guest "$out" "$work") || {
		echo "bench-ab: the VM for kernel $k failed (exit status $?)" >&2
		status=1
	}
	echo "=== bench-ab: kernel $k took $((SECONDS - start))s"
	bin/abtable "$out" || status=1
	rm -rf "bin/bench/ab-$k"
	mkdir -p bin/bench
	cp -r "$out" "bin/bench/ab-$k"
	echo
done
echo "raw outputs: bin/bench/ab-*/"
exit $status
