// Package cq mirrors librpma's completion queues (struct rpma_cq).
//
// A connection has a main CQ ([github.com/gorpma/rpma/conn.Conn.CQ]),
// which receives the completions of its send queue and, without a receive
// CQ, of its receive queue, and optionally a receive CQ
// ([github.com/gorpma/rpma/conn.Conn.RCQ], when
// conn.Config.RCQSize is not 0). Each CQ has its own completion channel,
// unless conn.Config.SharedCompChannel makes the two share one. The channel
// fds are non-blocking, so they can join an epoll set or Go's runtime
// poller.
// An SRQ can have its own receive CQ too (srq.SRQ.RCQ).
//
// [CQ.Wait] waits for a completion event in Go's runtime poller
// (acknowledging it and re-arming the CQ); [CQ.GetWC] polls a batch of
// completions into the caller's slice in one cgo crossing, without
// allocating. Use them in a poll-then-wait loop (see CQ.Wait). A failed
// completion's [WC.Err] is a *rpma.WCError naming the status. With a
// shared completion channel, wait with conn.Conn.Wait instead.
//
// A connection's CQ waits also watch the connection's events, so a wait
// ends (with a *rpma.ConnEventError) when the other side disconnects or
// dies. [CQ.Resize] resizes a CQ (ibv_resize_cq).
package cq
