#!/usr/bin/env bash
# Why Go trails C more on Linux 6.12 (doc/notes/performance-lab-notes.md,
# "The 6.12 gap: the Go runtime's threads and rxe's kworker"),
# and what the Go runtime's preemption of a busy poller costs: in one VM
# (6.12 by default), a scheduler trace of Write64 busy-polled by Go and by C
# librpma, then an untraced timing run of the same, with Go also pinned to
# one vCPU (the setting that avoids the gap).
#
#   1. traces: BENCH_TRACE_ROUNDS (3) rounds of conn's BenchmarkOps/Write64
#      as is, the same under `taskset -c 0` with GOMAXPROCS=2, the same
#      without the data path's yield (RPMA_BENCH_YIELD=0: the runtime
#      preempts the poller every 10 ms) and rpma_lat -o Write64,
#      BENCH_TRACE_ITERS (500) operations each, with
#      ftrace recording sched_switch, sched_wakeup, every system call's
#      entry and rxe's work items; bin/schedtable reads them.
#   2. timing: BENCH_ROUNDS (11) rounds of the four, untraced,
#      BENCH_ITERS (1000) operations each (Go: BenchmarkOps for the mean,
#      BenchmarkOpsStamped for the median), within BENCH_ROUND_BUDGET
#      (300 s).
#
# BENCH_SCHED_KERNEL (6.12) picks the kernel.
# Everything is built on the host. Outputs in bin/bench-sched/KERNEL/:
# trace-*.txt, go.txt, gopin.txt, gonoyield.txt, c.txt, and the two
# tables.
set -uo pipefail

guest() {
	local out=$1 bin=$2
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	local t=/sys/kernel/tracing
	[ -d $t/events ] || mount -t tracefs nodev $t || return 1
	echo 0 >$t/tracing_on
	echo 32768 >$t/buffer_size_kb
	echo >$t/set_event
	local e
	for e in sched:sched_switch sched:sched_wakeup raw_syscalls:sys_enter workqueue:workqueue_execute_start; do
		echo $e >>$t/set_event
	done
	local pin=(taskset -c 0 env GOMAXPROCS=2)
	local goargs=(-test.run '^$' -test.bench '^BenchmarkOps$/^Write64$')
	traced() { # NAME CMD...: one traced run, its trace in out/trace-NAME.txt
		local name=$1
		shift
		echo >$t/trace
		echo 1 >$t/tracing_on
		timeout -k 5 120 "$@" >>"$out/trace-runs.log" 2>&1 || echo "trace $name: exit status $?" | tee -a "$out/errors.txt" >&2
		echo 0 >$t/tracing_on
		cat $t/trace >"$out/trace-$name.txt"
	}
	local r n=${BENCH_TRACE_ITERS:-500}
	for r in $(seq 1 "${BENCH_TRACE_ROUNDS:-3}"); do
		traced "go-$r" "$bin/conn.test" "${goargs[@]}" -test.benchtime "${n}x"
		traced "gopin-$r" "${pin[@]}" "$bin/conn.test" "${goargs[@]}" -test.benchtime "${n}x"
		traced "gonoyield-$r" env RPMA_BENCH_YIELD=0 "$bin/conn.test" "${goargs[@]}" -test.benchtime "${n}x"
		traced "c-$r" "$bin/rpma_lat" -o Write64 -n "$n" -p $((7500 + r)) "$ip"
	done
	echo >$t/set_event
	n=${BENCH_ITERS:-1000}
	local start=$SECONDS budget=${BENCH_ROUND_BUDGET:-300}
	goargs=(-test.run '^$' -test.bench '^BenchmarkOps(Stamped)?$/^Write64$' -test.benchtime "${n}x")
	for r in $(seq 1 "${BENCH_ROUNDS:-11}"); do
		[ $((SECONDS - start)) -le "$budget" ] || break
		echo "# round $r" | tee -a "$out/go.txt" "$out/gopin.txt" "$out/gonoyield.txt" >>"$out/c.txt"
		timeout -k 5 120 "$bin/conn.test" "${goargs[@]}" >>"$out/go.txt" 2>&1
		timeout -k 5 120 "${pin[@]}" "$bin/conn.test" "${goargs[@]}" >>"$out/gopin.txt" 2>&1
		timeout -k 5 120 env RPMA_BENCH_YIELD=0 "$bin/conn.test" "${goargs[@]}" >>"$out/gonoyield.txt" 2>&1
		timeout -k 5 120 "$bin/rpma_lat" -o Write64 -n "$n" -p $((7600 + r)) "$ip" >>"$out/c.txt" 2>&1
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
go build -o bin/schedtable ./internal/bench/cmd/schedtable || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-bench-sched.XXXXXX") || exit 1 # shared with the VM
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_lat" internal/bench/testdata/rpma_lat.c -lrpma || exit 1
kernel=${BENCH_SCHED_KERNEL:-6.12}
out=$work/$kernel
mkdir -p "$out"
echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)" >"$out/meta.txt"
status=0
(cd conn && "$root/bin/rxevm" -kernel "$kernel" -timeout "${BENCH_VM_TIMEOUT:-12m}" -- \
	bash "$root/scripts/bench-sched.sh" --guest "$out" "$work") || {
	echo "bench-sched: the VM failed (exit status $?)" >&2
	status=1
}
args=()
for f in "$out"/trace-*-*.txt; do
	[ -e "$f" ] || continue
	case $(basename "$f") in trace-c-*) args+=(rpma_lat "$f") ;; *) args+=(conn.test "$f") ;; esac
done
# Not piped into tee: a pipeline's commands run in subshells, where a
# failure's status=1 would be lost.
{
	cat "$out/meta.txt"
	echo
	bin/schedtable "${args[@]}" || status=1
	echo
	bin/schedtable -timing "$out" || status=1
} >"$out/tables.md"
cat "$out/tables.md"
rm -rf "bin/bench-sched/$kernel"
mkdir -p bin/bench-sched
cp -r "$out" "bin/bench-sched/$kernel"
echo "raw outputs: bin/bench-sched/$kernel/"
exit $status
