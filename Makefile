# The two commands a new user needs, both safe on a fresh Debian 12 machine
# as root (each runs the idempotent setup first):
#   make demo   the main job: every bundled example on a real rxe device
#               (inside the VM unless RPMA_DEMO_IP names a local RDMA address)
#   make test   lint, host unit tests, the integration tier inside the VM
#               on kernels 6.12 and 6.1, and the tests that boot VMs
.PHONY: all demo test setup lint build rxevm clean

all: build

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test: setup
	bash scripts/test.sh

lint:
	bash scripts/lint.sh

build: rxevm
	go build ./...

rxevm:
	go build -o bin/rxevm ./cmd/rxevm

clean:
	rm -rf bin
