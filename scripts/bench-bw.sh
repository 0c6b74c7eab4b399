#!/usr/bin/env bash
# Bandwidth against queue depth and latency against message size, Go
# against C librpma (`make bench`; doc/performance.md, "Bandwidth and
# message size"): in one rxe VM per kernel, conn's BenchmarkBandwidth and
# BenchmarkLatencySize (conn/bench_bw_linux_test.go) and the same on C
# librpma (internal/bench/testdata/rpma_bw.c, same names), in alternation
# for BENCH_ROUNDS rounds (odd rounds Go first, even rounds C first); then
# the tables (medians, and the median of the paired per-round Go/C ratios
# with their spread) and the plots, doc/img/bench-latency-size-K.png and
# doc/img/bench-bandwidth-qd-K.png, drawn by internal/bench/cmd/benchplot.
#
# Every sub-benchmark does clamp(BENCH_BW_BYTES / size, BENCH_BW_MIN,
# BENCH_BW_MAX) requests, on both sides (go test -benchtime Nx; rpma_bw -b
# -m -M): a byte budget, so 1 MiB does few and 4 KiB many. The Go binary
# runs once per distinct count (each run sets up its own connection).
#
#   BENCH_KERNELS="6.12 6.1"  the VMs' kernels, one VM at a time
#   BENCH_ROUNDS=11           rounds of Go and C
#   BENCH_BW_BYTES=4194304    bytes per sub-benchmark (4 MiB)
#   BENCH_BW_MIN=8            least requests per sub-benchmark
#   BENCH_BW_MAX=1000         most requests per sub-benchmark
#   BENCH_ROUND_BUDGET=300    seconds (in the VM) after which no round starts
#   BENCH_VM_TIMEOUT=8m       rxevm's timeout for each VM
#   BENCH_PLOTS=doc/img       where the PNGs go ("" for none)
#   BENCH_ICOUNT=1            count instead of time: rxevm -icount, one vCPU,
#                            every ns is one guest instruction
#                            (doc/performance.md, "What it was measured on")
#
# A round takes about 20 s under TCG on a quiet 2-core host (4 minutes a
# kernel with the VM's boot); the budget keeps a kernel under about 6
# minutes on a loaded one, with fewer rounds (the tables say how many).
#
# Raw outputs: bin/bench/bw-KERNEL/ (go-NN.txt, c-NN.txt, meta.txt,
# timing.txt, table.md). The exit status is non-zero when a VM, a run or
# a figure is missing.
set -uo pipefail

bytes=${BENCH_BW_BYTES:-4194304} least=${BENCH_BW_MIN:-8} most=${BENCH_BW_MAX:-1000}

# iters SIZE: the requests of a sub-benchmark of SIZE bytes (as rpma_bw).
iters() {
	local n=$((bytes / $1))
	((n < least)) && n=$least
	((n > most)) && n=$most
	echo "$n"
}

# guest OUT BIN: runs inside the VM; writes OUT/{go,c}-NN.txt from the
# binaries in BIN.
guest() {
	local out=$1 bin=$2
	local rounds=${BENCH_ROUNDS:-11} budget=${BENCH_ROUND_BUDGET:-300}
	local ip=${RPMA_TEST_IP:?RPMA_TEST_IP is not set: run in the VM}
	mark() { echo "${SECONDS}s $*" >>"$out/timing.txt"; }
	# The Go test binary is large: run it from the guest's memory, not
	# over the shared directory.
	local gobin=$bin/conn.test shm
	if shm=$(mktemp -d /dev/shm/bw.XXXXXX 2>/dev/null) && cp "$bin/conn.test" "$shm/"; then
		gobin=$shm/conn.test
	fi
	# One go test run per distinct request count: the sizes that share it.
	local -A group=()
	local size name n
	for size in 8 64 512 4096 32768 65536 262144 1048576; do
		case $size in
		1048576) name=1MiB ;;
		*) if ((size >= 1024)); then name=$((size / 1024))KiB; else name=${size}B; fi ;;
		esac
		n=$(iters $size)
		group[$n]+="${group[$n]:+|}$name"
	done
	{
		echo "kernel: $(uname -r), $(nproc) vCPUs, qemu TCG"
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "byte budget: $bytes per sub-benchmark, $least to $most requests"
		for n in "${!group[@]}"; do echo "requests $n: ${group[$n]}"; done
	} >>"$out/meta.txt"
	local r rc f side
	for r in $(seq 1 "$rounds"); do
		if [ "$r" -gt 1 ] && [ "$SECONDS" -gt "$budget" ]; then
			echo "rounds: $((r - 1)) of $rounds (the rest skipped: over the ${budget}s budget)" >>"$out/meta.txt"
			break
		fi
		f=$(printf %02d "$r")
		local order="go c"
		((r % 2 == 0)) && order="c go"
		for side in $order; do
			mark "round $r: $side"
			if [ "$side" = go ]; then
				for n in "${!group[@]}"; do
					timeout -k 5 150 "$gobin" -test.run '^$' \
						-test.bench "^Benchmark(Bandwidth|LatencySize)\$/^(Write|Read)\$/^(${group[$n]})\$" \
						-test.benchtime "${n}x" -test.count 1 >>"$out/go-$f.txt" 2>>"$out/go.err"
					rc=$?
					[ $rc -eq 0 ] || echo "go, round $r, $n requests: exit status $rc" | tee -a "$out/errors.txt" >&2
				done
			else
				timeout -k 5 200 "$bin/rpma_bw" -b "$bytes" -m "$least" -M "$most" -t 190 \
					-p $((7400 + r)) "$ip" >"$out/c-$f.txt" 2>>"$out/c.err"
				rc=$?
				[ $rc -eq 0 ] || echo "rpma_bw, round $r: exit status $rc" | tee -a "$out/errors.txt" >&2
			fi
		done
	done
	mark end
	[ -n "${shm:-}" ] && rm -rf "$shm"
	return 0
}

if [ "${1:-}" = --guest ]; then
	guest "$2" "$3"
	exit
fi

cd "$(dirname "$0")/.." || exit 1
root=$PWD
kernels=${BENCH_KERNELS:-6.12 6.1}
plots=${BENCH_PLOTS-doc/img}
go build -o bin/rxevm ./cmd/rxevm || exit 1
icount=()
[ "${BENCH_ICOUNT:-0}" = 1 ] && icount=(-icount)
go build -o bin/benchplot ./internal/bench/cmd/benchplot || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-bench-bw.XXXXXX") || exit 1 # shared with the VM
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/conn.test" ./conn || exit 1
cc -O2 -Wall -Wextra -Werror -o "$work/rpma_bw" internal/bench/testdata/rpma_bw.c -lrpma || exit 1
[ -z "$plots" ] || mkdir -p "$plots" || exit 1

status=0
for k in $kernels; do
	out=$work/bw-$k
	mkdir -p "$out"
	echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)" >"$out/meta.txt"
	echo "=== bench-bw: kernel $k"
	start=$SECONDS
	(cd conn && "$root/bin/rxevm" "${icount[@]}" -kernel "$k" -timeout "${BENCH_VM_TIMEOUT:-8m}" -- \
		bash "$root/scripts/bench-bw.sh" --guest "$out" "$work") || {
		echo "bench-bw: the VM for kernel $k failed (exit status $?)" >&2
		status=1
	}
	echo "=== bench-bw: kernel $k took $((SECONDS - start))s"
	[ -s "$out/errors.txt" ] && status=1
	sed 's/^/- /' "$out/meta.txt"
	echo
	args=(-tables)
	[ -z "$plots" ] || args+=(-title "kernel $k" -latency "$plots/bench-latency-size-$k.png" -bandwidth "$plots/bench-bandwidth-qd-$k.png")
	bin/benchplot "${args[@]}" "$out" | tee "$out/table.md" || status=1
	rm -rf "bin/bench/bw-$k"
	mkdir -p bin/bench
	cp -r "$out" "bin/bench/bw-$k"
	echo
done
echo "raw outputs: bin/bench/bw-*/"
exit $status
