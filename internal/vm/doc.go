// Package vm boots throwaway qemu virtual machines with an active Soft-RoCE
// (rxe) device and runs one command inside them. It is the engine behind
// cmd/rxevm and the host-side tests that need more than one VM.
//
// # Why a VM
//
// The machines this project builds and tests on run a kernel without
// CONFIG_INFINIBAND. A stock Debian kernel does ship rdma_rxe, so the
// package boots one under qemu (TCG: KVM cannot run a stock kernel here),
// with the host's root file system as a read-only 9p root, a tmpfs overlay
// for writes, and the host's temporary directory shared read-write at the
// same path, so host-built test binaries run unchanged.
//
// # Layout of a run
//
//   - The kernel package (linux-image-*-unsigned) is fetched with apt-get
//     download and unpacked into the cache (see [CacheDir]), keyed by package
//     name and version.
//   - An initramfs of busybox-static, the decompressed modules the guest
//     needs (resolved with modprobe --show-depends from the kernel's own
//     modules.dep) and a small /init script is built and cached, keyed by a
//     hash of all its inputs.
//   - qemu starts with three virtio-serial ports (the command's stdout, its
//     stderr and a control channel), the serial console on a fourth stream
//     (kernel messages never mix with the command's output) and three 9p
//     exports: the host root (read-only), the host temporary directory
//     (read-write) and a per-run control directory (read-write).
//   - /init loads the modules, builds the overlay root and chroots into it,
//     running this same executable as the guest agent ([GuestMain]). The
//     agent brings up rxe0 (with two nodes it then waits at the start
//     barrier, see [Node.HoldStart]), runs the command with the caller's environment
//     and working directory, forwards signals, and writes the exit status
//     and the guest's dmesg into the control directory before powering off.
//
// Everything is cached under a lock and published by atomic rename, so
// several runs (go test -exec runs one per test binary, in parallel) share
// one kernel and one initramfs without racing.
package vm
