# The two commands a new user needs, both safe on a fresh Debian 12 machine
# as root (each runs the idempotent setup first):
#   make demo   the main job: every bundled example on a real rxe device
#               (inside the VM unless RPMA_DEMO_IP names a local RDMA address)
#   make test   lint, host unit tests, the integration tier inside the VM
#               on kernels 6.12 and 6.1, and the tests that boot VMs
.PHONY: all demo test bench setup lint build rxevm clean

# Native RDMA FLUSH (ibv_wr_flush) needs rdma-core 45 or newer, whose
# libibverbs reports version 1.14.45 and up: then every go command of the
# targets below builds with the rpma_native_flush tag. Debian 12 ships 44.
IBVERBS_RELEASE := $(shell pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
ifeq ($(shell [ "$(IBVERBS_RELEASE)" -ge 45 ] 2>/dev/null && echo yes),yes)
export GOFLAGS += -tags=rpma_native_flush
endif

all: build

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test: setup
	bash scripts/test.sh

# Go vs C librpma vs perftest latencies, side by side in the VM
# (doc/performance.md).
bench: setup
	bash scripts/bench.sh

lint:
	bash scripts/lint.sh

build: rxevm
	go build ./...

rxevm:
	go build -o bin/rxevm ./cmd/rxevm

clean:
	rm -rf bin
