# The two commands a new user needs, both safe on a fresh Debian 12 machine
# as root (each runs the idempotent setup first):
#   make demo   the main job: every bundled example on a real rxe device
#               (inside the VM unless RPMA_DEMO_IP names a local RDMA address)
#   make test   lint, host unit tests, the integration tier inside the VM
#               on kernels 6.12 and 6.1, and the tests that boot VMs
.PHONY: all demo test bench setup lint build rxevm clean

# Native RDMA FLUSH (ibv_wr_flush) needs rdma-core 45 or newer, whose
# libibverbs reports version 1.14.45 and up. Every go command of the
# targets below builds with the rpma_native_flush tag where rdma-core is a
# release the native path has been tested on (make test's vm-6.12-debian13
# tier: Debian 13's 56); elsewhere the flush stays emulated, which works
# with every peer. Debian 12 ships 44. Set RPMA_NATIVE_FLUSH=1 or 0 to
# decide yourself.
NATIVE_FLUSH_TESTED := 56
IBVERBS_RELEASE := $(shell pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
RPMA_NATIVE_FLUSH ?= $(if $(filter $(NATIVE_FLUSH_TESTED),$(IBVERBS_RELEASE)),1,0)
ifeq ($(RPMA_NATIVE_FLUSH),1)
export GOFLAGS += -tags=rpma_native_flush
endif

all: build

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test: setup
	bash scripts/test.sh

# Go vs C librpma (and perftest), side by side in VMs (doc/performance.md):
# latency on rxe's loopback and over a two-node wire, many connections,
# bandwidth and message size, a scheduler trace on 6.12, many
# goroutines on one connection (doc/goroutines.md), and the spin before a
# park. Every script
# runs even if one before it failed; the target fails if any did.
BENCH_SCRIPTS := bench bench-2node bench-scale bench-bw bench-sched bench-goroutines bench-spin
bench: setup
	@status=0; for s in $(BENCH_SCRIPTS); do \
		echo "=== make bench: scripts/$$s.sh"; \
		bash scripts/$$s.sh || { echo "make bench: scripts/$$s.sh failed" >&2; status=1; }; \
	done; exit $$status

lint:
	bash scripts/lint.sh

build: rxevm
	go build ./... ./examples/... ./internal/bench/cmd/benchplot

rxevm:
	go build -o bin/rxevm ./cmd/rxevm

clean:
	rm -rf bin
