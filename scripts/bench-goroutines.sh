#!/usr/bin/env bash
# Many goroutines on one connection (`make bench`; doc/goroutines.md):
# conn's BenchmarkGoroutines (conn/bench_goroutines_linux_test.go) in one
# rxe VM per kernel, BENCH_ROUNDS times: the per-operation waiting calls
# (WriteWait, ReadWait, WriteAndFlushWait to persistence) from G = 1, 4,
# 16 and 64 goroutines, the one-goroutine post and busy poll of the
# mirror (Raw), and a hand-written dispatcher over the mirror's calls;
# and C librpma keeping G operations in flight from one thread, busy-polled
# (rpma_bw -s goroutines, internal/bench/testdata/rpma_bw.c: rows
# C/OP/QD=G), run after the Go benchmark in odd rounds and before it in
# even ones.
# Per operation: ns/op (wall time over the operations: the inverse of the
# throughput), cgo crossings, the stamped p50, p99 and p99.9, allocations.
# Then a table of the medians over the rounds.
#
#   BENCH_KERNELS="6.1 6.12"  the VMs' kernels, one VM at a time
#   BENCH_ROUNDS=3            runs of the benchmark in each VM
#   BENCH_ITERS=2000          operations per sub-benchmark (all goroutines)
#   BENCH_ICOUNT=1            count instead of time: rxevm -icount, one
#                             vCPU, every ns is one guest instruction
#   BENCH_VM_TIMEOUT=10m      rxevm's timeout for each VM
#   BENCH_WAKEUPS=1           also count per operation the threads'
#                             sleeps (sleeps/op: voluntary context
#                             switches) and futex calls (futex/op), and
#                             record each run's execution trace, whose
#                             goroutine wake-ups bin/benchplot -wakeups
#                             counts into wakeups-N.md (wakeups/op: the G
#                             goroutines'; all-wakeups/op: every
#                             goroutine's; and by waking function); the
#                             trace costs time of its own: use such rounds
#                             for these counts only
#
# Raw outputs: bin/bench/goroutines-KERNEL/ (round-N.txt, table.md,
# wakeups-N.md with BENCH_WAKEUPS=1). The
# exit status is non-zero when a VM or a run failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
rounds=${BENCH_ROUNDS:-3} iters=${BENCH_ITERS:-2000}
go build -o bin/rxevm ./cmd/rxevm || exit 1
mkdir -p bin/bench
go test -c -o bin/bench/conn.test ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o bin/bench/rpma_bw internal/bench/testdata/rpma_bw.c -lrpma || exit 1
wakeups=
if [ "${BENCH_WAKEUPS:-}" = 1 ]; then
	wakeups=1
	go build -o bin/benchplot ./internal/bench/cmd/benchplot || exit 1
fi
icount=()
[ "${BENCH_ICOUNT:-}" = 1 ] && icount=(-icount)
status=0
for k in ${BENCH_KERNELS:-6.1 6.12}; do
	out=$root/bin/bench/goroutines-$k
	rm -rf "$out" && mkdir -p "$out"
	# One VM: the rounds run one after the other inside it, writing to a
	# directory under TMPDIR (the one the VM shares read-write).
	work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-bench-goroutines.XXXXXX") || exit 1
	env=
	[ -n "$wakeups" ] && env="mkdir -p $work/traces-\$r && RPMA_BENCH_WAKEUPS=$work/traces-\$r"
	gobench="$env $root/bin/bench/conn.test -test.run '^\$' -test.bench '^BenchmarkGoroutines\$' -test.benchtime ${iters}x -test.benchmem"
	cbench="$root/bin/bench/rpma_bw -s goroutines -M $iters -t 300 -p \$((7400 + r)) \$RPMA_TEST_IP"
	script="for r in \$(seq 1 $rounds); do
		if [ \$((r % 2)) = 1 ]; then $gobench && $cbench; else $cbench && $gobench; fi >$work/round-\$r.txt 2>&1 || exit 1
	done"
	bin/rxevm -kernel "$k" "${icount[@]}" -timeout "${BENCH_VM_TIMEOUT:-10m}" -- sh -c "$script"
	rc=$?
	cp "$work"/round-*.txt "$out/" 2>/dev/null
	if [ -n "$wakeups" ]; then
		for d in "$work"/traces-*; do
			[ -d "$d" ] || continue
			bin/benchplot -wakeups "$d" >"$out/wakeups-${d##*traces-}.md" || status=1
		done
	fi
	rm -rf "$work"
	if [ $rc -ne 0 ] || ! ls "$out"/round-*.txt >/dev/null 2>&1; then
		echo "bench-goroutines: the $k VM failed (status $rc)" >&2
		status=1
		continue
	fi
	# The median of each metric over the rounds, per sub-benchmark.
	cat "$out"/round-*.txt | awk -v rounds="$rounds" -v kernel="$k" '
		/^BenchmarkGoroutines\// {
			name = $1; sub(/^BenchmarkGoroutines\//, "", name); sub(/-[0-9]+$/, "", name)
			if (!(name in seen)) { seen[name] = 1; order[++n] = name }
			for (i = 3; i < NF; i += 2) { m = $(i + 1); v[name, m, ++c[name, m]] = $i; if (!(m in mseen)) { mseen[m] = 1; metrics[++nm] = m } }
		}
		function median(name, m,    k, a, i, j, t) {
			k = c[name, m]; for (i = 1; i <= k; i++) a[i] = v[name, m, i] + 0
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return k ? a[int((k + 1) / 2)] : "-"
		}
		END {
			printf "BenchmarkGoroutines on %s, medians of %d rounds\n\n| row |", kernel, rounds
			for (j = 1; j <= nm; j++) printf " %s |", metrics[j]
			printf "\n|---|"; for (j = 1; j <= nm; j++) printf "---:|"; printf "\n"
			for (i = 1; i <= n; i++) { printf "| %s |", order[i]; for (j = 1; j <= nm; j++) printf " %s |", median(order[i], metrics[j]); printf "\n" }
		}' | tee "$out/table.md"
done
exit $status
