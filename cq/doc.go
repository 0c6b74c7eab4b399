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
//
// This package is started by Core library I as far as connections need it:
// the CQ objects, their fds and sizes. Waiting for and reading completions
// (rpma_cq_wait, rpma_cq_get_wc) come with Core library II.
package cq
