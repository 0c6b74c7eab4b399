// Command rxevm runs a command inside a throwaway qemu VM that has an
// active Soft-RoCE device (rxe0), and exits with the command's status.
//
//	rxevm [flags] -- CMD [ARGS...]
//
// The command runs in the caller's working directory with the caller's
// environment plus RPMA_TEST_IP=192.0.2.1, RPMA_TEST_REQUIRE_RXE=1 and
// RPMA_TEST_KERNEL (the guest's kernel release). The host's root file
// system is visible read-only (writes go to a throwaway overlay), except the
// host's temporary directory (TMPDIR or /tmp), which is shared read-write
// at the same path. The command's stdout and stderr arrive separately and
// never carry kernel messages. SIGINT, SIGTERM and SIGQUIT are forwarded to
// the command's process group; a second signal, or 30 s without the command
// ending, kills the VM. qemu never outlives rxevm.
//
// As the -exec program of go test, which runs each test binary in its own
// VM:
//
//	go build -o bin/rxevm ./cmd/rxevm
//	go test -exec "$PWD/bin/rxevm --" ./...
//
// Flags:
//
//	-kernel SERIES  guest kernel: 6.12 (default; the newest
//	                linux-image-6.12.N+deb12-amd64-unsigned, from
//	                bookworm-security) or 6.1 (the kernel linux-image-amd64
//	                depends on; its rxe has no native atomic write), or a
//	                full package name
//	-timeout D      kill the VM after D (default 20m)
//	-boot-timeout D boot afresh a VM that has not started its command
//	                after D (default 3m; a hung boot)
//	-cpus N         virtual CPUs (default 2; 1 with -icount)
//	-icount         count instructions: qemu's -icount shift=0,sleep=off,
//	                one TCG thread, one vCPU (a second one does not come
//	                up); the guest's clocks advance 1 ns per guest
//	                instruction, so a timing in the guest is a count that
//	                host load does not move (doc/performance.md,
//	                "What it was measured on")
//	-mem MIB        memory in MiB (default 2048)
//	-v              show the boot console and what rxevm prepares
//	-nodes N        1 (default), or 2: two VMs joined by a virtual wire
//	-netem PARAMS   with -nodes 2: tc netem on each node's NIC ("delay 5ms")
//	-pmem SIZE[,FILE]
//	                give node 0 an emulated NVDIMM of SIZE (e.g. 256M),
//	                backed by FILE (kept, and its namespace reused, from
//	                boot to boot) or by a fresh temporary file
//	-pmem-mode M    devdax (default: /dev/dax0.0) or fsdax (ext4 mounted
//	                with -o dax at /mnt/pmem); RPMA_TEST_PMEM names it and
//	                RPMA_TEST_PMEM_MODE says which
//	-userspace NAME run the command in another Debian release's userspace:
//	                debian13 (Debian 13: rdma-core 56, librpma 1.3,
//	                perftest 25), built once with debootstrap from the
//	                mirror apt uses and cached (about 250 MB); the guest
//	                lays it over the host's root, so the host's files it
//	                lacks (the project, Go) stay at their paths.
//	                RPMA_TEST_USERSPACE names it ("host" without the flag)
//	-print-include  with -userspace: print the directory of its rdma-core
//	                headers (to build against them: CGO_CFLAGS=-I...), exit
//
// Two nodes: node 0 (the server side) is 192.0.2.1, node 1 (the client
// side) 192.0.2.2, each with rxe0 on its eth0; the wire is a qemu UDP
// socket netdev over host loopback, so nothing leaves the machine. Both
// run CMD, or node 1 runs what follows "::". Each sees RPMA_TEST_NODE (0
// or 1), RPMA_TEST_IP (its own address) and RPMA_TEST_PEER_IP. SIGUSR1 to
// rxevm kills node 0's VM at once (a power loss; its NVDIMM file keeps what
// reached it) while node 1 runs on. The exit status is node 1's if not
// zero, else node 0's (unless node 0 was killed by SIGUSR1).
//
// Exit status: the command's own status (128+N if signal N killed it, 127
// if it was not found), or
//
//	123  the VM booted and started the command, but no status came back
//	     (guest crash or panic)
//	124  the timeout fired; the VM was killed
//	125  the VM could not be prepared or booted (qemu, kernel image or
//	     busybox missing, guest setup failed)
//	2    bad usage
//
// On any failure rxevm prints the tail of the guest's dmesg on stderr.
// A run whose kernel crashed before any command started (rare under TCG:
// a late-boot oops) is booted afresh, up to three times in all; so is one
// whose VM has not started its command after -boot-timeout (a hung boot),
// and a guest kernel that stops scheduling a CPU for 20 s panics
// (softlockup_panic) rather than hang. No command ever runs twice. With
// two nodes, each node sets up and then waits until the other is ready
// too before its command starts, so a crash or hang of either node's
// kernel is retried the same way. The kernel package download is retried
// too (four tries).
//
// Kernels and initramfs images are cached in $RXEVM_CACHE or
// ~/.cache/rxevm, keyed by their inputs: a second run downloads and builds
// nothing. Requirements (Debian 12, as root): qemu-system-x86,
// busybox-static, kmod, xz-utils, iproute2, rdma-core, ibverbs-providers,
// and apt lists that include bookworm-security; `make setup` installs them.
package main
