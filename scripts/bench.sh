#!/usr/bin/env bash
# Side-by-side latency benchmarks (`make bench`; doc/performance.md): in one
# rxe VM per kernel, the Go data-path benchmarks (conn: BenchmarkOps,
# BenchmarkPostUnsignaled), the same operations on C librpma
# (internal/bench/testdata/rpma_lat.c) and perftest's ib_*_lat, then one
# table per kernel: Go ns/op, librpma ns/op, perftest ns/op and the ratios.
#
# Everything is built on the host first (the Go test binary with go test -c,
# rpma_lat with cc); the VM only runs. The Go benchmarks and rpma_lat run in
# alternation, BENCH_ROUNDS times each, so that both see the same changes in
# the host's load (each round: Go's plain loops for the means, Go's stamped
# loops for the per-operation percentiles, both again without the data
# path's yield (RPMA_BENCH_YIELD=0, into go-noyield.txt: the yield's own
# table), and rpma_lat, in an order rotated from round to round; a
# "# round N" line before each round's output pairs them in the tables);
# perftest runs
# once per test, its server started first and its client retried until
# the server listens.
#
#   BENCH_KERNELS="6.12 6.1"  the VMs' kernels, one VM at a time
#   BENCH_ITERS=1000          iterations per run of each operation
#   BENCH_WARMUP=500          operations before each timed loop, in Go
#                            (RPMA_BENCH_WARMUP) and in rpma_lat (-w): the
#                            first few hundred of a run cost more in both
#                            (doc/notes/performance-lab-notes.md,
#                            "Warm-up (2026-12-05)")
#   BENCH_ROUNDS=11           rounds of the Go benchmarks and of rpma_lat
#   BENCH_ROUND_BUDGET=240    seconds (in the VM) after which no round starts
#   BENCH_PERFTEST_BUDGET=330 seconds after which no perftest run starts
#   BENCH_VM_TIMEOUT=10m      rxevm's timeout for each VM
#   BENCH_ONLY=""             the rows to run, by name ("Write64 Read64"):
#                            those sub-benchmarks of Go's BenchmarkOps and
#                            BenchmarkOpsStamped, rpma_lat -o for each, no
#                            perftest; every row when empty
#   BENCH_STEP_TIMEOUT=300    seconds each program of a round may run (raise
#                            it with BENCH_ITERS: 100,000 operations
#                            counted take longer)
#   BENCH_ICOUNT=1            count instead of time: rxevm -icount, one vCPU,
#                            every ns is one guest instruction
#                            (doc/performance.md, "What it was measured on")
#   BENCH_PIN_KERNELS=6.12    kernels on which both programs run pinned to
#                            vCPU 0 (taskset -c 0; Go with GOMAXPROCS=2),
#                            leaving vCPU 1 to rxe's kernel workers
#                            (doc/performance.md, "Pinning and GOMAXPROCS")
#
# On a quiet 2-core host the whole run takes about two and a half minutes;
# the budgets keep it under 15 minutes on a loaded one (figures are then
# noisy).
#
# The raw outputs are kept in bin/bench/KERNEL/. The exit status is non-zero
# when a VM or a figure is missing.
set -uo pipefail

# guest OUT BIN: runs inside the VM; writes OUT/{go,go-noyield,c,meta,timing}.txt,
# OUT/perftest-KEY.txt and OUT/tsc-mhz.txt from the binaries in BIN.
guest() {
	local out=$1 bin=$2 pin=() pingo=()
	if [ "${3:-}" = pin ]; then
		pin=(taskset -c 0)
		pingo=(taskset -c 0 env GOMAXPROCS=2)
	fi
	local n=${BENCH_ITERS:-1000} rounds=${BENCH_ROUNDS:-11} w=${BENCH_WARMUP:-500} st=${BENCH_STEP_TIMEOUT:-300}
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	mark() { echo "${SECONDS}s $*" >>"$out/timing.txt"; }
	{
		echo "kernel: $(uname -r), $(nproc) vCPUs, qemu TCG"
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "iterations per run: $n"
		# What the Go library does on this device: native atomic write when
		# rxe0 has IB_UVERBS_DEVICE_ATOMIC_WRITE (bit 40, Linux 6.2+);
		# native flush only in builds with the rpma_native_flush tag.
		local capx aw=emulated fl=emulated
		capx=$(ibv_devinfo -v -d rxe0 2>/dev/null | awk '/device_cap_flags_ex/ {print $2; exit}')
		[ -n "$capx" ] && (((capx >> 40) & 1)) && aw=native
		[[ ${GOFLAGS:-} == *rpma_native_flush* ]] && fl="native if rxe0 can"
		echo "Go: atomic write: $aw; flush: $fl"
	} >>"$out/meta.txt"
	local r rc bre budget=${BENCH_ROUND_BUDGET:-240}
	local only=${BENCH_ONLY:-} sub='' op
	local gore='^(BenchmarkOps|BenchmarkPostUnsignaled|BenchmarkCrossing)$' nyre='^(BenchmarkOps|BenchmarkPostUnsignaled)$'
	if [ -n "$only" ]; then
		sub="/^(${only// /|})\$"
		gore="^BenchmarkOps\$$sub" nyre="^BenchmarkOps\$$sub"
		echo "rows: $only (BENCH_ONLY)" >>"$out/meta.txt"
	fi
	# round_step STEP runs one program of round r (its output appended to
	# the round's files).
	round_step() {
		case $1 in
		go)
			timeout -k 5 "$st" "${pingo[@]}" env RPMA_BENCH_WARMUP="$w" "$bin/conn.test" -test.run '^$' -test.bench "$gore" \
				-test.benchtime "${n}x" -test.count 1 >>"$out/go.txt" 2>>"$out/go.err"
			rc=$?
			[ $rc -eq 0 ] || echo "go benchmarks, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
			;;
		go-stamped)
			timeout -k 5 "$st" "${pingo[@]}" env RPMA_BENCH_WARMUP="$w" "$bin/conn.test" -test.run '^$' -test.bench "^BenchmarkOpsStamped\$$sub" \
				-test.benchtime "${n}x" -test.count 1 >>"$out/go.txt" 2>>"$out/go.err"
			rc=$?
			[ $rc -eq 0 ] || echo "go stamped benchmarks, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
			;;
		go-noyield)
			for bre in "$nyre" "^BenchmarkOpsStamped\$$sub"; do
				timeout -k 5 "$st" "${pingo[@]}" env RPMA_BENCH_WARMUP="$w" RPMA_BENCH_YIELD=0 "$bin/conn.test" -test.run '^$' -test.bench "$bre" \
					-test.benchtime "${n}x" -test.count 1 >>"$out/go-noyield.txt" 2>>"$out/go.err"
				rc=$?
				[ $rc -eq 0 ] || echo "go benchmarks without the yield ($bre), round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
			done
			;;
		c)
			for op in ${only:-all}; do
				local oarg=(-o "$op")
				[ "$op" != all ] || oarg=()
				timeout -k 5 "$st" "${pin[@]}" "$bin/rpma_lat" -n "$n" -w "$w" -t $((st - 10)) -p $((7300 + r)) "${oarg[@]}" "$ip" >>"$out/c.txt" 2>>"$out/c.err"
				rc=$?
				[ $rc -eq 0 ] || echo "rpma_lat $op, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
			done
			;;
		esac
	}
	for r in $(seq 1 "$rounds"); do
		if [ "$r" -gt 1 ] && [ "$SECONDS" -gt "$budget" ]; then
			echo "rounds: $((r - 1)) of $rounds (the rest skipped: over the ${budget}s budget)" >>"$out/meta.txt"
			break
		fi
		echo "# round $r" | tee -a "$out/go.txt" "$out/go-noyield.txt" >>"$out/c.txt"
		# The programs run in a rotated order, one step further each
		# round, so that none always runs first (on a cold cache) or
		# right after another's teardown.
		local steps=(go go-stamped go-noyield c) i step
		for i in 0 1 2 3; do
			step=${steps[$(((r + i) % 4))]}
			mark "round $r: $step"
			round_step "$step"
		done
	done
	# perftest reports TSC cycles (-C): its own estimate of the CPU's
	# frequency fails or wanders under TCG (it then prints inf); the
	# guest kernel's TSC calibration converts them (benchtable).
	awk -F': *' '/^cpu MHz/ {print $2; exit}' /proc/cpuinfo >"$out/tsc-mhz.txt"
	local port=18600 key cmd srv ok try attempt pbudget=${BENCH_PERFTEST_BUDGET:-330}
	while read -r key cmd; do
		mark "perftest $key"
		ok=0
		for attempt in 1 2 3; do # a new server each time: a failed client ends it
			if [ "$SECONDS" -gt "$pbudget" ]; then
				echo "perftest $cmd: skipped (over the ${pbudget}s budget)" | tee -a "$out/errors.txt" >&2
				break
			fi
			port=$((port + 1))
			# shellcheck disable=SC2086 # cmd is a command line
			timeout -k 5 45 $cmd -R -C -n "$n" -p "$port" >"$out/perftest-$key.srv" 2>&1 &
			srv=$!
			# Start the client once the server listens (rdma_cm's LISTEN
			# ids), and retry it a few times. A client that crashes (seen
			# under TCG: ib_read_lat and ib_write_lat clients segfaulting,
			# mostly on the try after a failed one) takes its server down;
			# the next attempt starts another.
			for try in $(seq 1 40); do
				rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*:$port\b" && break
				sleep 0.25
			done
			for try in $(seq 1 10); do
				# shellcheck disable=SC2086
				timeout -k 5 45 $cmd -R -C -n "$n" -p "$port" "$ip" >"$out/perftest-$key.txt" 2>&1
				rc=$?
				if [ $rc -eq 0 ]; then
					ok=1
					break
				fi
				{
					echo "=== attempt $attempt, try $try: exit status $rc"
					cat "$out/perftest-$key.txt"
				} >>"$out/perftest-$key.fail"
				kill -0 "$srv" 2>/dev/null || break # the server is gone: start another
				[ "$SECONDS" -le $((pbudget + 60)) ] || break
				sleep 0.5
			done
			# The server ends after its client; give it 5 s, then end it.
			for _ in $(seq 1 10); do
				kill -0 "$srv" 2>/dev/null || break
				sleep 0.5
			done
			kill "$srv" 2>/dev/null
			wait "$srv"
			[ $ok -eq 1 ] && break
			echo "perftest $cmd: attempt $attempt failed ($try tries): $(tail -n 1 "$out/perftest-$key.txt")" | tee -a "$out/errors.txt" >&2
		done
	done < <([ -n "$only" ] || cat "$bin/perftest-runs.txt") # none with BENCH_ONLY
	mark end
	return 0
}

if [ "${1:-}" = --guest ]; then
	guest "$2" "$3" "${4:-}"
	exit
fi

cd "$(dirname "$0")/.." || exit 1
root=$PWD
kernels=${BENCH_KERNELS:-6.12 6.1}
go build -o bin/rxevm ./cmd/rxevm || exit 1
icount=()
[ "${BENCH_ICOUNT:-0}" = 1 ] && icount=(-icount)
go build -o bin/benchtable ./internal/bench/cmd/benchtable || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-bench.XXXXXX") || exit 1 # shared with the VM
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_lat" internal/bench/testdata/rpma_lat.c -lrpma || exit 1
bin/benchtable -runs >"$work/perftest-runs.txt" || exit 1

status=0
for k in $kernels; do
	out=$work/$k
	mkdir -p "$out"
	echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)" >"$out/meta.txt"
	pin_arg=
	case " ${BENCH_PIN_KERNELS-6.12} " in *" $k "*)
		pin_arg=pin
		echo "pinned: both programs on vCPU 0 (taskset -c 0), Go with GOMAXPROCS=2; vCPU 1 left to rxe's kernel workers" >>"$out/meta.txt"
		;;
	esac
	echo "=== bench: kernel $k"
	start=$SECONDS
	(cd conn && "$root/bin/rxevm" "${icount[@]}" -kernel "$k" -timeout "${BENCH_VM_TIMEOUT:-10m}" -- \
		bash "$root/scripts/bench.sh" --guest "$out" "$work" "$pin_arg") || {
		echo "bench: the VM for kernel $k failed (exit status $?)" >&2
		status=1
	}
	echo "=== bench: kernel $k took $((SECONDS - start))s"
	bin/benchtable "$out" || status=1
	rm -rf "bin/bench/$k"
	mkdir -p bin/bench
	cp -r "$out" "bin/bench/$k"
	echo
done
echo "raw outputs: bin/bench/"
exit $status
