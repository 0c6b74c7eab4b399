#!/usr/bin/env bash
# The whole test suite, in three tiers, as `make test` runs it:
#   lint     gofmt, vet, staticcheck, the cgo boundary, cross builds;
#   host     unit tests on this machine (integration tests skip: no RDMA),
#            then the packages that reach internal/ibv again against its
#            fake (tag rpma_fake), printing internal/core's coverage;
#   vm-6.12  the tests of every package that uses the device, inside the
#            rxe VM on the 6.12 kernel (native atomic write), with -race,
#            and an emulated NVDIMM as Device DAX; a skip is a failure there;
#   vm-6.1   the same on the 6.1 kernel (atomic write emulated), with the
#            NVDIMM as FsDAX (ext4 -o dax); each VM tier also runs the
#            fault-injection replay (internal/inject, tag rpma_inject);
#   vm-6.12-debian13
#            the packages the native build changes, on 6.12 in a Debian 13
#            userspace (rdma-core 56, librpma 1.3; rxevm -userspace
#            debian13), the library built with native flush against its
#            headers: native RDMA FLUSH and atomic write, and interop with
#            librpma 1.3 (without -race: the other tiers have it);
#   vmhost   tests that boot VMs themselves (build tag vmhost), on the host:
#            the harness's own tests and the power-loss test.
# Every tier runs even if an earlier one failed; the last line sums them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
tally=$(mktemp)
trap 'rm -f "$tally" "$tally.failures"' EXIT
status=0

go build -o bin/rxevm ./cmd/rxevm || exit 1
go build -o bin/testsummary ./internal/cmd/testsummary || exit 1
RPMA_EXAMPLES_RACE=durable-log bash scripts/build-examples.sh || exit 1 # run by the examples' test in the VM
summary=$root/bin/testsummary
source scripts/workspace.sh # workspace_pkgs: ./... ./examples/... and the tools'
# The C programs the tests run (librpma's side of the interop tests, the
# benchmarks', the descriptor checks) are cached by content
# (internal/cbuild): the host tier compiles them in a fraction of a second
# each, the VM tiers, which see the host's files, run them instead of
# compiling each again under TCG (5-60 s a program). The Debian 13 tier's
# headers differ: it compiles its own.
export RPMA_C_CACHE=$root/bin/ccache

# Packages whose tests run in the VM: those whose tests use the device,
# which they reach through internal/rdmatest, but the harness itself
# (cmd/rxevm boots VMs: the vmhost tier). The others run on the host only:
# in the VM they would only add a boot each (~25 s under TCG) to a tier.
mapfile -t vm_pkgs < <(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' "${workspace_pkgs[@]}" |
	awk '/ github.com\/gorpma\/rpma\/internal\/rdmatest( |$)/ {print $1}' | grep -v '/cmd/rxevm$')
[ ${#vm_pkgs[@]} -ge 10 ] || { echo "test.sh: only ${#vm_pkgs[@]} packages use the device: ${vm_pkgs[*]}" >&2; exit 1; }
# go test starts the packages' test binaries in the order given, two at a
# time (-p, GOMAXPROCS), and one VM leaves about a core idle: the
# longest packages go first (2026-12-07, in seconds on 6.12: examples
# 225, conn 154, internal/core 87, ep 66, cmd/rpmaperf 65), so that the
# short ones fill the other slot and no long one runs alone at the end.
vm_first=(examples conn internal/core ep cmd/rpmaperf)
long_first() {
	local p f
	for f in "${vm_first[@]}"; do
		for p in "$@"; do [ "$p" != "github.com/gorpma/rpma/$f" ] || echo "$p"; done
	done
	for p in "$@"; do
		for f in "${vm_first[@]}"; do [ "$p" != "github.com/gorpma/rpma/$f" ] || continue 2; done
		echo "$p"
	done
}
mapfile -t vm_pkgs < <(long_first "${vm_pkgs[@]}")
# The packages whose code or tests the native-flush build changes (the
# build tag rpma_native_flush), and the examples, whose test pairs them
# with librpma 1.3: what the Debian 13 tier runs. The rest of the library
# is the same build there as in the other tiers.
native_pkgs=(./conn ./examples ./internal/core ./internal/ibv)

tier() {
	local name=$1
	shift
	echo "=== tier $name"
	local start=$SECONDS
	"$@"
	local rc=$?
	echo "=== tier $name took $((SECONDS - start))s"
	[ $rc -eq 0 ] || status=1
}

host() {
	local rc=0
	go test -race -count=1 -json "${workspace_pkgs[@]}" 2>&1 | "$summary" -tier host -tally "$tally" || rc=1
	# The fake verbs layer (build tag rpma_fake, internal/ibv/fake*.go):
	# internal/core's logic on the host, under -race, in seconds. Only the
	# packages of internal/ whose tests reach package ibv: the others are
	# the same build as above.
	local fake_pkgs out
	mapfile -t fake_pkgs < <(go list -tags rpma_fake -test -f '{{.ImportPath}} {{join .Deps " "}}' ./internal/... |
		awk '$1 ~ /\.test$/ && / github.com\/gorpma\/rpma\/internal\/ibv( |$)/ {sub(/\.test$/, "", $1); print $1}' | sort -u)
	out=$(mktemp)
	go test -race -tags rpma_fake -count=1 -cover -json "${fake_pkgs[@]}" 2>&1 | tee "$out" |
		"$summary" -tier host-fake -tally "$tally" || rc=1
	echo "host-fake: internal/core $(grep '"Package":"github.com/gorpma/rpma/internal/core"' "$out" |
		grep -o 'coverage: [0-9.]*% of statements' | tail -1) (rpma_fake)"
	rm -f "$out"
	# The stub NIC (build tag rpma_stubnic, doc/notes/native-stub.md): its
	# tests, and each of its benchmarks once for 1000 operations, so that
	# neither the stub nor the benchmarks rot (about 15 s with the build).
	go test -tags rpma_stubnic -count=1 -json -run StubNIC -bench StubNIC -benchtime 1000x \
		./internal/ibv/ ./internal/core/ 2>&1 | "$summary" -tier host-stubnic -tally "$tally" || rc=1
	return "$rc"
}
# Tests of logic alone (a model, pipes; no device) that the host tier runs,
# with -race and on the fake too: the VM tiers skip them rather than run
# them again under TCG, where they took 30-37 s of each tier's core
# package with -race.
host_only='TestReserveAgainstModel|TestWaitsIndependentDeadlines|TestWaitsIndependentCancellation'
vm() {
	local kernel=$1 pmem_mode=$2 skip="^($host_only)\$"
	[ -z "${3:-}" ] || skip+="|$3" # a tier's own skips
	local exec="$root/bin/rxevm -kernel $kernel -pmem 256M -pmem-mode $pmem_mode --"
	local inject_out
	inject_out=$(mktemp)
	{
		# The fault-injection replay: its own build (tag rpma_inject),
		# without -race (it runs each sequence hundreds of times), in a
		# VM of its own beside the others (about 50 s, one VM, a core
		# idle when it ran after them); its output joins the tier's
		# once both are done.
		go test -tags rpma_inject -exec "$exec" -count=1 -timeout 10m -json ./internal/inject/ >"$inject_out" 2>&1 &
		local inject=$!
		RPMA_TEST_REQUIRE_PMEM=1 go test -exec "$exec" -race -count=1 -timeout 20m -json -skip "$skip" "${vm_pkgs[@]}"
		wait "$inject"
		cat "$inject_out"
	} 2>&1 | "$summary" -tier "vm-$kernel" -no-skips -tally "$tally"
	rm -f "$inject_out"
}
vm_debian13() ( # a subshell: its exports stay here
	local inc
	inc=$("$root/bin/rxevm" -userspace debian13 -print-include) || return 1
	local exec="$root/bin/rxevm -kernel 6.12 -userspace debian13 -pmem 256M -pmem-mode devdax --"
	# The examples too are built with native flush: the interop test pairs
	# them with librpma 1.3, which flushes natively on this device.
	export CGO_CFLAGS="-O2 -g -I$inc" GOFLAGS=-tags=rpma_native_flush
	bash scripts/build-examples.sh bin/examples-native || return 1
	# TestIntegrationMixedFlushBuilds pairs them with the emulated build.
	# Of the examples' own pairings it runs those the native build changes
	# (flush, atomic write, GPSPM, the Go examples): the others (connect,
	# read, write, send, receive, SRQ, rping) run the same code as in the
	# 6.12 tier, and their interop with librpma 1.3 still runs here.
	# Its packages keep both cores busy (2026-12-07: the librpma 1.3
	# interop in a VM of its own beside them saved nothing, 301 s against
	# 306 s: its C programs compile in the VM, under TCG).
	RPMA_EXAMPLES_BIN=$root/bin/examples-native RPMA_EXAMPLES_BIN_EMULATED=$root/bin/examples RPMA_TEST_REQUIRE_PMEM=1 \
		go test -exec "$exec" -count=1 -timeout 20m -json \
		-skip "^($host_only)\$|"'^TestIntegrationExamples$/^(0[1-46]|08|1[0-3]|rping)' "${native_pkgs[@]}" 2>&1 |
		"$summary" -tier vm-6.12-debian13 -no-skips -tally "$tally"
)
vmhost() {
	# The power-loss tests and the harness's own run side by side (-p 2):
	# neither times its VMs to the second, and the harness's leave about a
	# core idle alone (2026-12-07: 641 s together against 955 s one after
	# the other). The fault tests time each failure's detection against
	# a PeerTimeout window (internal/faults), so they run alone, after.
	{
		go test -tags vmhost -p 2 -count=1 -timeout 40m -json ./internal/powerloss/... ./cmd/... ./internal/vm/...
		go test -tags vmhost -p 1 -count=1 -timeout 30m -json ./internal/faults/...
	} 2>&1 | "$summary" -tier vmhost -no-skips -tally "$tally"
}

only=${RPMA_TEST_TIERS:-lint host vm-6.12 vm-6.1 vm-6.12-debian13 vmhost}

# Prepare each kernel's VM (download, initramfs) once, before the tiers: a
# download that fails for good is then one clear error here, not a test
# package that failed to boot. rxevm retries the download itself.
case " $only " in *" vm-"* | *" vmhost "*)
	for k in 6.12 6.1; do
		echo "=== preparing the $k VM"
		bin/rxevm -kernel "$k" -- true || { echo "rxevm: could not prepare the $k VM" >&2; status=1; }
	done
	;;
esac
case " $only " in *" vm-6.12-debian13 "*)
	echo "=== preparing the Debian 13 userspace"
	start=$SECONDS
	bin/rxevm -userspace debian13 -print-include || { echo "rxevm: could not prepare the Debian 13 userspace" >&2; status=1; }
	echo "=== the Debian 13 userspace took $((SECONDS - start))s"
	;;
esac
for t in $only; do
	case $t in
	lint) tier lint bash scripts/lint.sh ;;
	host) tier host host ;;
	vm-6.12) tier "$t" vm 6.12 devdax ;;
	# The 6.1 tier skips what its kernel cannot change: the C programs'
	# compile checks (the same Debian 12 headers as on 6.12) and the
	# librpma interop of every example but atomic write (emulated on 6.1
	# on both sides, native on 6.12): the pairings' runs (their C programs
	# come from the cache of C builds either way).
	vm-6.1) tier "$t" vm 6.1 fsdax '^(TestRPMALatCompiles|TestRPMABWCompiles|TestRPMAScaleCompiles|TestGPSPMProtobufC)$|^TestIntegrationInteropLibrpma$/^(0[0-689]|1|grant)' ;;
	vm-6.12-debian13) tier "$t" vm_debian13 ;;
	vmhost) tier vmhost vmhost ;;
	*) echo "unknown tier $t" >&2; status=1 ;;
	esac
done
"$summary" -total "$tally" || status=1
exit $status
