// Package ibv is the project's one door to libibverbs and librdmacm: thin,
// policy-free cgo wrappers of the verbs and rdma_cm calls the packages above
// need. Only this package (and others under internal/) imports "C".
//
// Rules of the package:
//   - No policy: defaults, validation and librpma semantics live in peer,
//     mr, cq, conn and ep. Errors are *os.SyscallError values naming the C
//     call and carrying its errno; the layers above turn them into rpma
//     errors.
//   - One operation, one cgo crossing: per-operation work (building a work
//     request, polling a batch of completions) happens in small C helpers.
//   - No Go pointer is kept by C: memory the device touches comes from mmap
//     or C, and work-request ids are integers.
//
// Built without cgo or on a system other than Linux, every entry point
// returns ErrNotSupported.
package ibv
