// Package ibv is the project's one door to libibverbs and librdmacm: thin,
// policy-free cgo wrappers of the verbs and rdma_cm calls the packages above
// need. Only this package (and others under internal/) imports "C".
//
// What it wraps: devices and their capabilities (device_*.go); rdma_cm
// event channels, CM ids, address translation, connect/accept/reject/
// disconnect, id migration and QP creation through rdma_create_qp_ex
// (cm_*.go); protection domains, completion channels and CQs, with a
// batch poll in one crossing over plain ibv_poll_cq (verbs_*.go; the
// extended ibv_start_poll API loses completions on rxe before rdma-core
// 55). Fds are returned as created (blocking); callers decide.
//
// Rules of the package:
//   - No policy: defaults, validation and librpma semantics live in peer,
//     mr, cq, conn and ep. Errors are *os.SyscallError values naming the C
//     call and carrying its errno; the layers above turn them into rpma
//     errors.
//   - One operation, one cgo crossing: per-operation work (building a work
//     request, polling a batch of completions) happens in small C helpers.
//     The crossings stay cgo calls: calling runtime.asmcgocall directly
//     makes one 3-4 times cheaper, but a stop-the-world then waits for
//     every post's system call on rxe (doc/notes/performance-lab-notes.md,
//     "Direct calls into C: tried, and not taken (2026-12-04)").
//   - No Go pointer is kept by C: memory the device touches comes from mmap
//     or C, and work-request ids are integers.
//
// Built without cgo or on a system other than Linux, every entry point
// returns ErrNotSupported.
//
// Fault injection: every textual call of a C function that can fail is a
// site, listed once in rpma_inject.h (an X-macro of name, call and style)
// and guarded by the site's RPMA_INJECT check just before the call. The
// style says how an injected failure looks: "ret" (the call returns the
// errno), "null" (NULL with errno), "minus1" (-1 with errno), "neg"
// (ibv_poll_cq's negative return) or "eai" (rdma_getaddrinfo's -1 with
// errno); the libc calls internal/core makes from Go are "go" sites,
// guarded by InjectGo. An injected destroy leaves its object alive, so a
// retry succeeds. Only a build with the tag rpma_inject (Linux, cgo)
// counts and can fail sites, through InjectSites, InjectArm, InjectFired,
// InjectCounts and InjectReset; any other build compiles every check to
// the constant 0 (InjectBuild is false there). In every build
// LiveObjects and LiveObjectCount count the C objects created and not yet
// destroyed, by kind, to find leaks.
package ibv
