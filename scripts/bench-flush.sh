#!/usr/bin/env bash
# Native against emulated flush (doc/notes/performance-lab-notes.md,
# "Native against emulated flush (2026-12-02)"; doc/persistence.md):
# conn's BenchmarkOps Flush, WriteThenFlush64 and WriteAndFlush64, built
# twice (emulated: the default build; native: tag rpma_native_flush,
# against the Debian 13 userspace's rdma-core 56 headers), run in
# alternation in one VM (kernel 6.12, rxevm -userspace debian13), then a
# table of the medians over the rounds and of the per-round ratios.
#
#   BENCH_ITERS=1000  iterations of each operation per run
#   BENCH_ROUNDS=9    runs of each build
#
# Raw outputs in bin/bench/flush/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ "${1:-}" = guest ]; then
	out=$2 n=${BENCH_ITERS:-1000} rounds=${BENCH_ROUNDS:-9}
	for r in $(seq 1 "$rounds"); do
		order="emulated native" # rotated: neither flavour always runs first
		((r % 2 == 0)) && order="native emulated"
		for flavour in $order; do
			echo "round $r $flavour" >>"$out/$flavour.txt"
			"$out/conn-$flavour.test" -test.run '^$' -test.bench 'BenchmarkOps/(Flush|WriteThenFlush64|WriteAndFlush64)$' \
				-test.benchtime "${n}x" -test.count 1 >>"$out/$flavour.txt" 2>>"$out/$flavour.err"
		done
	done
	exit 0
fi

bash scripts/setup.sh >/dev/null
go build -o bin/rxevm ./cmd/rxevm
inc=$(bin/rxevm -userspace debian13 -print-include)
out=$root/bin/bench/flush
rm -rf "$out" && mkdir -p "$out"
go test -c -o "$out/conn-emulated.test" ./conn/
CGO_CFLAGS="-O2 -g -I$inc" go test -c -tags rpma_native_flush -o "$out/conn-native.test" ./conn/
# The VM shares the host's temporary directory only: run from there.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$out"/conn-*.test "$0" "$tmp/"
bin/rxevm -kernel 6.12 -userspace debian13 -timeout 20m -- bash "$tmp/$(basename "$0")" guest "$tmp"
cp "$tmp"/*.txt "$tmp"/*.err "$out/" 2>/dev/null || true

# name -> ns/op per round, for each flavour; then medians and ratios.
awk '
	FNR == 1 { flavour = FILENAME; sub(/.*\//, "", flavour); sub(/\.txt$/, "", flavour) }
	/^round / { r = $2 }
	/^BenchmarkOps\// { name = $1; sub(/^BenchmarkOps\//, "", name); sub(/-[0-9]+$/, "", name)
		v[flavour, name, r] = $3; names[name] = 1; if (r > rounds) rounds = r }
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		printf "| op | emulated ns/op | native ns/op | native/emulated (median of %d paired rounds) | spread |\n", rounds
		print "|---|---:|---:|---:|---|"
		for (name in names) {
			ne = nn = nr = 0
			for (r = 1; r <= rounds; r++) {
				if ((("emulated", name, r) in v) && (("native", name, r) in v)) {
					e[++ne] = v["emulated", name, r]; n[++nn] = v["native", name, r]
					q[++nr] = v["native", name, r] / v["emulated", name, r]
				}
			}
			if (nr == 0) continue
			me = median(e, ne); mn = median(n, nn); mq = median(q, nr)
			printf "| %s | %.0f | %.0f | %.2f | %.2f-%.2f |\n", name, me, mn, mq, q[1], q[nr]
		}
	}' "$out/emulated.txt" "$out/native.txt" | tee "$out/table.md"
