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
//
// # The wait contract
//
// CQ.Wait, conn.Conn.Wait, conn.Conn.GetSendComp and GetRecvComp may be
// called by any number of goroutines at once, each with its own context,
// and keep these promises:
//
//   - a wait returns its own context's error only when its own context is
//     done (promptly: within milliseconds), never because another
//     waiter's deadline passed or was cancelled;
//   - it returns nil when at least one completion event has been read
//     since it began (by it or by another waiter of the same channel: an
//     event wakes every waiter), or when completions are already waiting
//     to be polled; while the spin before a park is on
//     (conn.Config.SpinLimit), an event whose completions were polled
//     already (caught by a spin) does not end a wait: the wait returns
//     once a poll finds completions, or completions the caller never
//     sees (the library's own) came unannounced;
//   - no arrival is lost: every completion event wakes at least one waiter;
//   - a nil return with nothing to poll (a spurious wake-up) is allowed:
//     GetWC then returns rpma.ErrNoCompletion, which is benign;
//   - Close wakes every waiter with an error matching os.ErrClosed.
//
// The same holds for the exclusive waits conn.Conn.NextEvent and
// ep.Endpoint.NextConnReq, except that each event (request) goes to
// exactly one caller.
//
// # Busy polling
//
// A goroutine that calls [CQ.GetWC] in a loop until a completion arrives
// never blocks. Go's runtime would preempt it every 10 ms (with a signal,
// or by taking its P during the cgo call), and its sysmon thread would
// then wake every 20 µs for a while. So the library yields such a
// goroutine itself (like runtime.Gosched, but without waking a second
// thread to take it), after a post or an empty poll, once every few
// milliseconds per connection; without that, Go's 99th-percentile
// latency on rxe was two to three times librpma's (doc/performance.md,
// "Busy polling or waiting"). On Soft-RoCE (rxe) in Linux 6.12, unlike
// 6.1, a request's work runs in kernel workers, and on a machine with few
// CPUs the runtime's threads still take the CPU the worker needs: leave
// rxe a CPU, e.g. `taskset -c 0 env GOMAXPROCS=2 ./prog` on two CPUs
// (doc/performance.md, "Pinning and GOMAXPROCS").
//
// # Event loops
//
// For callers with their own epoll loop, [CQ.FD] (or conn.Conn.CompFD on
// a shared channel) is the completion channel's fd, and [CQ.TryWait]
// (conn.Conn.TryWait) is the wait that never blocks: it reads one
// pending event, acknowledges it and re-arms the CQ, or returns an error
// matching rpma.ErrNoCompletion (librpma's rpma_cq_wait on a non-blocking
// fd). A readable fd therefore stops being readable once TryWait has run,
// so a level-triggered loop does not spin.
package cq
