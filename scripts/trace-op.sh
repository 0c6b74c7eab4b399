#!/usr/bin/env bash
# Counts the user-space instructions of one operation, Go against C
# librpma (doc/notes/performance-lab-notes.md, "Counting instructions
# (2026-12-04)" and "A post in one frame (2026-12-05)"): in one rxe VM,
# gdb single-steps TRACE_OPS consecutive operations of conn's BenchmarkOps
# (from one entry of conn.(*Conn).Write, Read, ... to the next) and of
# rpma_lat (from rpma_write, rpma_read, ...), after 200 warm-up
# operations, and prints each program's instructions per operation by
# function. Kernel instructions are not counted (a system call is one
# step); `rxevm -icount` with `BENCH_ICOUNT=1 scripts/bench-ab.sh` counts
# those too, in total.
#
#   bash scripts/trace-op.sh [OP]   OP: Write64 (default), Read64,
#                                   AtomicWrite, AtomicWriteEmulated
#
#   TRACE_OPS=3        operations traced in each program
#   TRACE_KERNEL=6.1   the VM's kernel
#
# The data path's periodic yield is off in the Go run (RPMA_BENCH_YIELD=0):
# single steps are slow, so every traced operation would otherwise be due
# one, where an untraced run yields once per 4 million TSC cycles.
# Outputs: bin/bench/trace-OP-{go,c}.txt, and for
# scripts/trace-annotate.py the steps per instruction address
# (trace-OP-{go,c}.pcs) and the traced Go binary (trace-OP-go.bin).
set -uo pipefail

# guest OP DIR: runs inside the VM.
guest() {
	local op=$1 dir=$2 gofn cfn
	case $op in
	Write64) gofn='conn.(*Conn).Write' cfn=rpma_write ;;
	Read64) gofn='conn.(*Conn).Read' cfn=rpma_read ;;
	AtomicWrite | AtomicWriteEmulated) gofn='conn.(*Conn).AtomicWrite' cfn=rpma_atomic_write ;;
	*)
		echo "trace-op: no entry point known for $op" >&2
		return 2
		;;
	esac
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	TRACE_OUT=$dir/trace-$op-go.txt TRACE_FN="'github.com/gorpma/rpma/$gofn'" RPMA_BENCH_YIELD=0 \
		timeout -k 5 900 gdb -q -batch -x "$dir/trace-op.py" --args "$dir/conn.test" \
		-test.run '^$' -test.bench "^BenchmarkOps\$/^$op\$" -test.benchtime 1000x >"$dir/gdb-go.log" 2>&1 ||
		{ echo "trace-op: gdb on the Go benchmark failed (see $dir/gdb-go.log)" >&2; return 1; }
	TRACE_OUT=$dir/trace-$op-c.txt TRACE_FN=$cfn \
		timeout -k 5 900 gdb -q -batch -x "$dir/trace-op.py" --args "$dir/rpma_lat" \
		-o "$op" -n 1000 -p 7390 "$ip" >"$dir/gdb-c.log" 2>&1 ||
		{ echo "trace-op: gdb on rpma_lat failed (see $dir/gdb-c.log)" >&2; return 1; }
}

if [ "${1:-}" = --guest ]; then
	guest "$2" "$3"
	exit
fi

op=${1:-Write64}
cd "$(dirname "$0")/.." || exit 1
root=$PWD
command -v gdb >/dev/null || { echo "trace-op: gdb is not installed" >&2; exit 1; }
go build -o bin/rxevm ./cmd/rxevm || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-trace.XXXXXX") || exit 1 # shared with the VM
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_lat" internal/bench/testdata/rpma_lat.c -lrpma || exit 1
cp scripts/trace-op.py "$work/"
(cd conn && "$root/bin/rxevm" -kernel "${TRACE_KERNEL:-6.1}" -timeout 30m -- \
	bash "$root/scripts/trace-op.sh" --guest "$op" "$work") || exit 1
mkdir -p bin/bench
for p in go c; do
	cp "$work/trace-$op-$p.txt" "bin/bench/trace-$op-$p.txt"
	cp "$work/trace-$op-$p.txt.pcs" "bin/bench/trace-$op-$p.pcs"
	echo "=== $p: bin/bench/trace-$op-$p.txt"
	head -30 "bin/bench/trace-$op-$p.txt"
done
cp "$work/conn.test" "bin/bench/trace-$op-go.bin"
echo "per instruction: python3 scripts/trace-annotate.py $op FUNCTION-REGEXP"
