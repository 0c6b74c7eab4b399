#!/usr/bin/env bash
# The main job (`make demo`): builds the bundled examples and runs each one
# on a real rxe device. By default everything runs inside the rxevm VM
# (server and client on 192.0.2.1, like librpma's run-all-examples.sh).
#
#   RPMA_DEMO_IP=ADDR make demo    run natively instead, on a host that has
#                                  an active RDMA device with address ADDR
#   RPMA_DEMO_KERNEL=6.1 make demo the VM's kernel (default 6.12)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin/examples
go build -o bin/rxevm ./cmd/rxevm
for d in examples/*/; do
	name=$(basename "$d")
	if [ -f "$d/main.go" ]; then
		go build -o "bin/examples/$name" "./$d"
	fi
	for side in server client; do
		if [ -f "$d/$side/main.go" ]; then
			go build -o "bin/examples/$name-$side" "./$d/$side"
		fi
	done
done
if [ -n "${RPMA_DEMO_IP:-}" ]; then
	exec bash scripts/demo-run.sh "$RPMA_DEMO_IP"
fi
exec bin/rxevm -kernel "${RPMA_DEMO_KERNEL:-6.12}" -- bash scripts/demo-run.sh
