// Package rpma holds the vocabulary shared by every package of this module,
// the Go mirror of Intel's librpma (pmem/rpma, last release 1.3.0).
//
// It defines no RDMA objects. Peers, endpoints, connections, memory regions
// and completion queues live in the sibling packages peer, ep, conn, mr and
// cq. This package only provides what they all have in common:
//
//   - error codes and their strings ([Code], [ErrorString]), one sentinel
//     error per code ([ErrInvalidArgument], [ErrProvider], ...), the
//     operation error [OpError] and the failed work completion [WCError];
//   - completion and flush flags ([CompletionFlags], [FlushType],
//     [AtomicWriteAlignment]);
//   - connection events ([ConnEvent]);
//   - logging ([SetLogThreshold], [SetLogFunction], [SetLogger], [Logf]).
//
// The package is pure Go and has no cgo.
//
// # Errors
//
// Every function of the module that mirrors a librpma function returning
// RPMA_E_* returns an error that [errors.Is] matches against the sentinel of
// that code, and [CodeOf] recovers the numeric code through any wrapping.
// When the failure came from a verbs or rdma_cm call, the error also matches
// the errno reported by that call:
//
//	// err came from registering a memory region
//	if errors.Is(err, rpma.ErrProvider) && errors.Is(err, unix.EOPNOTSUPP) {
//		// ibv_reg_mr refused the memory: maybe FsDAX without ODP
//	}
//
// Operations that were posted successfully but failed on the wire arrive as
// a [*WCError], as in librpma where they are a work completion status rather
// than a return code.
//
// # Logging
//
// Logging mirrors librpma's log API: a primary threshold gates which messages
// are produced at all (default [LogWarning]), and an auxiliary threshold tells
// the default log function what to write out (default [LogDisabled], so by
// default nothing reaches stderr). The default function writes to a
// [go.uber.org/zap] logger, replaceable with [SetLogger]; the whole function
// is replaceable with [SetLogFunction].
package rpma
