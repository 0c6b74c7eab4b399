#!/usr/bin/env bash
# The main job (`make demo`): builds the bundled examples and runs each one
# on a real rxe device, checking what each server read or received against
# what its client sent (examples/internal/demo). By default everything runs
# inside the rxevm VM, server and client on 192.0.2.1 (like librpma's
# run-all-examples.sh), with an emulated NVDIMM as the examples' persistent
# memory.
#
#   RPMA_DEMO_IP=ADDR make demo      run natively instead, on a host that
#                                    has an active RDMA device with ADDR
#   RPMA_DEMO_PMEM=PATH              with RPMA_DEMO_IP: a pmem path to use
#   RPMA_DEMO_KERNEL=6.1 make demo   the VM's kernel (default 6.12)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/examples
go build -o bin/rxevm ./cmd/rxevm
go build -o bin/demo ./examples/internal/demo
bash scripts/build-examples.sh
if [ -n "${RPMA_DEMO_IP:-}" ]; then
	exec bin/demo -bin "$bin" -addr "$RPMA_DEMO_IP" -pmem "${RPMA_DEMO_PMEM:-}"
fi
exec bin/rxevm -kernel "${RPMA_DEMO_KERNEL:-6.12}" -pmem 256M -- bin/demo -bin "$bin"
