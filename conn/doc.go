// Package conn mirrors librpma's connection configuration, connection
// requests and connections (struct rpma_conn_cfg, rpma_conn_req,
// rpma_conn), including the data path: Read, Write, WriteWithImm,
// AtomicWrite, Flush, Send, SendWithImm, Recv, and the remote atomics
// librpma does not have, CompareAndSwap and FetchAndAdd.
//
// # Connecting
//
//	// active side
//	req, err := conn.NewRequest(ctx, p, "192.0.2.1", "7204", nil) // resolves addr and route
//	c, err := req.Connect([]byte("hello"))                       // rdma_connect; consumes req
//	ev, err := c.NextEvent(ctx)                                  // rpma.ConnEstablished
//	server := c.PrivateData()                                    // the accept's private data
//	...
//	c.Disconnect()
//	ev, err = c.NextEvent(ctx)                                   // rpma.ConnClosed
//	c.Close()
//
// The passive side gets its requests from ep.Endpoint.NextConnReq, reads
// [ConnReq.PrivateData], accepts with [ConnReq.Connect] or refuses with
// [ConnReq.Reject], then waits for [rpma.ConnEstablished] and, at the end,
// [rpma.ConnClosed] before it disconnects and closes. Package
// [github.com/gorpma/rpma/session] does these sequences in a call each
// (Accept, Connect, Hangup, WaitForHangup), with a memory region and the
// peer configuration in the private data.
//
// Two rdma_cm facts shape the sequences: the connecting side completes the
// connection (moves its QP to RTS and answers the accept) only when its
// NextEvent reads the accept, so the accepting side's ESTABLISHED follows
// the connecting side's NextEvent; and the side that disconnects first
// gets its CLOSED only once the other side has disconnected too (or the CM
// gives up). Tests that drive both sides from one goroutine must follow
// that order.
//
// # Private data
//
// Connect sends at most [MaxConnectPrivateData] (56) bytes when connecting
// and [MaxAcceptPrivateData] (196) when accepting; more is an invalid
// argument, reported before anything is posted. Received private data is
// copied and padded by rdma_cm to those sizes, so compare the prefix you
// expect. Private data travels unauthenticated.
//
// # Waiting
//
// NextEvent waits in Go's runtime poller: the event channel's fd is
// non-blocking and registered with the poller, so no OS thread is blocked
// per waiter. It returns ctx.Err() as soon as its own ctx is cancelled or
// its deadline passes, whatever other goroutines wait for (the wait
// contract of package cq holds for every wait of this package). Callers
// that run their own epoll loop use [Conn.EventFD], readable whenever
// NextEvent would return at once, and the non-blocking [Conn.TryNextEvent]
// ([rpma.ErrNoEvent] when there is none), as they use cq.CQ.FD and
// cq.CQ.TryWait for completions.
//
// Completion waits (cq.CQ.Wait, [Conn.Wait], cq.CQ.WaitFor and the
// waiting calls) park in the poller too by default ([WaitPoller]). A
// connection made with Config.WaitMode set to [WaitThread] has the
// goroutine whose turn it is to wait block its thread in epoll_wait(2)
// instead, on the completion channel, the connection's events and a
// cancellation fd, so that a completion event wakes it directly as it
// wakes a blocking rpma_cq_wait: fewer system calls and wake-ups per
// waited operation, for one blocked thread per connection with a wait in
// progress (the runtime gives the goroutine's P to another thread
// meanwhile). Contexts, deadlines and Close end waits the same way in
// both modes.
//
// # The data path
//
//	dst, _ := mr.RemoteFromDescriptor(desc)            // the other side's region
//	c.Write(dst, 0, src, 0, n, rpma.CompletionOnError, 1)
//	c.Flush(dst, 0, n, rpma.FlushPersistent, rpma.CompletionAlways, 2)
//	for { n, err := c.CQ().GetWC(wcs); ... c.CQ().Wait(ctx) ... }
//
// Every post is one cgo crossing (a write and its flush can be one chain:
// [Conn.WriteAndFlush]) and allocates nothing; op contexts are integers
// (uint64), returned in cq.WC.OpContext. Arguments are checked before
// anything is posted: offsets and lengths against both regions (the
// remote size comes from the descriptor), the emulated flush's 8-byte
// read, the atomic write's alignment; violations are invalid arguments,
// never remote access errors. Which flushes are allowed follows librpma
// exactly (see [Conn.Flush]). A goroutine that posts and busy-polls
// without ever blocking is yielded by the library (a trip through Go's
// scheduler that wakes no other thread) once every few milliseconds, so
// that Go's runtime never has to preempt it (package cq, "Busy polling").
//
// # Many goroutines, one connection
//
// The mirror's calls post and leave the completion to whoever polls the
// CQ first. The per-operation calls post one operation and return once
// that operation has completed: [Conn.WriteWait], [Conn.ReadWait],
// [Conn.FlushWait], [Conn.WriteAndFlushWait] (durable on return with
// rpma.FlushPersistent), [Conn.AtomicWriteWait],
// [Conn.CompareAndSwapWait] and [Conn.FetchAndAddWait] (they return the
// old value), [Conn.WriteWithImmWait], [Conn.SendWait],
// [Conn.SendWithImmWait] and [Conn.RecvWait] (the next message). Any
// number of goroutines may call them at once on one connection:
//
//	go func() { err := c.WriteAndFlushWait(ctx, dst, 0, src, 0, 64, rpma.FlushPersistent) }()
//	go func() { err := c.WriteAndFlushWait(ctx, dst, 4096, src, 4096, 64, rpma.FlushPersistent) }()
//
// Their contract:
//   - each call returns on its own operation's completion, never on
//     another's, whatever other goroutines post, poll (GetWC) or wait for
//     on the connection; their completions never reach GetWC, and no
//     completion is delivered twice;
//   - a full send queue, receive queue or CQ makes the call wait for room
//     with its ctx; the mirror's posts keep returning rpma.ErrQueueFull;
//   - bad arguments are refused before anything is posted, with the
//     mirror call's errors;
//   - when ctx ends after the post, the error matches ctx.Err() and
//     [rpma.ErrOutcomeUnknown] and says that the outcome is unknown: the
//     operation may still complete. The
//     memory it reads or writes belongs to the device until the
//     connection is closed then;
//   - a failed completion returns an error matching [rpma.ErrConnBroken]
//     whose cause is the connection's first failure (a *rpma.WCError,
//     matching rpma.ErrCompletion), and so do the calls whose operations
//     were flushed after it; posts after that fail with the same error
//     at once. When the connection ends (CLOSED, LOST) the pending calls
//     return a *rpma.ConnEventError, which matches rpma.ErrConnBroken
//     too. Close ends every pending call at once with an error matching
//     os.ErrClosed;
//   - the source buffer of a write or send may be reused once the call
//     returned nil.
//
// They share the connection with the mirror's calls: a program may use
// both. The per-operation calls take send-queue and CQ slots like any
// post, and wait for completions on the connection's CQ like
// cq.CQ.Wait; the completions of the mirror's signaled operations stay
// queued for GetWC (or cq.CQ.WaitFor, which waits for one op context's
// completion and leaves the rest), and the CQ holds at most its size of
// them, so drain them. Each call waits for its own completion, so one
// goroutine keeps one operation in flight; more goroutines keep more.
// What several goroutines have ready together goes to the provider
// together: [Conn.WriteWait], [Conn.ReadWait], [Conn.SendWait] and
// [Conn.WriteAndFlushWait] (where the flush is emulated) calls made while
// others are in progress are posted as chains, one cgo crossing and one
// doorbell each, in the order they came (doc/goroutines.md). A
// provider's failure of a chain fails the calls whose operations it did
// not accept, each with the mirror's error.
//
// One goroutine keeps many operations in flight with the asynchronous
// calls, the per-operation calls split in two: [Conn.WriteAsync],
// [Conn.ReadAsync], [Conn.FlushAsync], [Conn.WriteAndFlushAsync],
// [Conn.AtomicWriteAsync], [Conn.CompareAndSwapAsync],
// [Conn.FetchAndAddAsync], [Conn.SendAsync] and [Conn.RecvAsync] post
// (waiting for room with their ctx) and return an [Op], whose [Op.Wait]
// returns that operation's own completion, in any order, once:
//
//	ops := make([]conn.Op, 0, 64)
//	for i := range 64 {
//		op, err := c.WriteAndFlushAsync(ctx, dst, i*64, src, i*64, 64, rpma.FlushPersistent)
//		...
//		ops = append(ops, op)
//	}
//	for _, op := range ops {
//		if _, err := op.Wait(ctx); err != nil { ... }
//	}
//
// The contract above holds for them too, Wait taking the waiting call's
// part; an Op allocates nothing. [Conn.WriteBatchAsync] and
// [Conn.ReadBatchAsync] post up to [MaxBatch] writes or reads as one
// chain, in one crossing into the provider and with one doorbell, an Op
// each.
//
// # Queue accounting
//
// The library counts the work requests each queue holds, from the post
// until the completion that retires them is polled (on an RC QP a
// completion retires every earlier request, signaled or not). A post that
// would overrun the send queue (Config.SQSize), the receive queue
// (Config.RQSize), or the CQ its completions go to (every request can put
// a completion there, at least on error) returns an error matching
// [rpma.ErrQueueFull] (which also matches rpma.ErrProvider, librpma's
// code for a failed ibv_post_send) instead of reaching the provider.
// Before giving up, a full post polls the CQ once itself: completions
// already there retire slots, and the caller's among them wait for the
// next GetWC (and make the next CQ Wait return at once). When
// ErrQueueFull comes back, the requests are really in flight: wait for
// and poll completions, then post again.
//
// Unsignaled requests ([rpma.CompletionOnError]) produce no completion on
// success, so nothing would retire a long run of them. The rule: in a run
// of unsignaled requests, every (SQSize/2)-th is posted signaled; its
// completion retires the run and is absorbed by GetWC (it never reaches
// the caller; an error still does). So polling always frees the queue,
// and a caller sees exactly the completions it asked for.
//
// # Grants: access per connection
//
// By default (as in librpma) every connection of a peer reaches every
// region registered on it for remote access. A region registered with
// [mr.UsageGranted] has no remote access of its own; [Conn.Grant] gives
// one connection access to a range of it (a memory window of type 2B
// bound on the connection's QP) until [Grant.Revoke] or the connection's
// Close. Grant once the connection is established (the bind is a work
// request) and send the other side [Grant.Descriptor] in a message; it
// uses the descriptor as a region's. The bind takes a send-queue slot and
// a CQ entry until its completion, which is the library's own, like the
// signaled requests of the run rule above. See doc/security.md.
//
// # Counters
//
// [Conn.Stats] returns what the connection did: requests posted by kind
// and their bytes, posts refused for room, busy-poll yields, liveness
// probes, grants, the send queue's high-water mark, and its CQs'
// completions, failures by status and waits by how they ended
// ([rpma.ConnStats]; [cq.CQ.Stats] and [srq.SRQ.Stats] are the same for
// a CQ and an SRQ). The data path counts with plain increments under the
// lock it takes anyway; Stats copies them under that lock and allocates
// nothing, so a monitoring loop may call it as often as it likes. A
// closed connection keeps its counters. [Conn.Stats]'s example publishes
// them with expvar, and says how a Prometheus collector reads them.
//
// # Broken connections
//
// A failed completion puts the QP in the error state. From the moment
// GetWC returns one (or a post finds the QP in the error state, or a
// CLOSED or LOST event is read), posts return an error matching
// [rpma.ErrConnBroken] that says why ([Conn.Broken]). After a failed
// completion, the operations that were outstanding complete with flush
// errors (rpma.ErrWRFlushed), which the caller drains with GetWC. After a
// CLOSED or LOST event they do not, until this side's [Conn.Disconnect]
// moves the QP to the error state: then they are flushed too (a
// connection the library reports lost for its [Config.PeerTimeout] has its
// QP moved to the error state already). Disconnect and Close do not wait
// for anything from the other side: they return promptly even when the
// other side is gone and CLOSED never comes.
//
// # Completion waits watch the connection
//
// cq.CQ.Wait (on the connection's CQs), [Conn.Wait], [Conn.GetSendComp]
// and [Conn.GetRecvComp] wait on the completion channel and on the
// connection's event channel together. When the other side disconnects
// or its process dies (its kernel disconnects: rxe reports CLOSED about
// 10-50 ms after a SIGKILL), a blocked wait returns a
// *rpma.ConnEventError carrying the CLOSED or LOST event instead of
// sleeping on a CQ that will never fire; events such a wait reads are
// kept for NextEvent, which still returns them. When the connection has
// ended with its QP in the error state (lost for its PeerTimeout, after
// this side's Disconnect), a wait first returns for the flushed
// completions of the operations still outstanding, which the provider may
// put on the CQ after the event (rxe flushes from a kernel task), and
// ends with the *rpma.ConnEventError only once they are all polled (or
// after one second, for a provider that does not flush): draining until
// the wait fails sees every operation end. This matters on rxe,
// where operations to a vanished peer have been seen never to fail with
// librpma's retry count of 7, so the events are the only signal.
//
// # Lifetimes and concurrency
//
// Each request and connection has its own rdma_cm event channel: an
// incoming request is moved to it (rdma_migrate_id) as soon as it arrives,
// so connections do not depend on their endpoint. A connection owns its
// QP, CQs and CM id; Close destroys them in librpma's order. The peer
// refuses to close while requests or connections are open; an SRQ
// refuses while connections using it are open.
//
// librpma's rule is one thread per connection. This package promises
// more, and tests it under the race detector: every method of Conn is
// safe for concurrent use. The data-path calls (Read, Write,
// WriteWithImm, AtomicWrite, Flush, WriteAndFlush, CompareAndSwap,
// FetchAndAdd, Send, SendWithImm, Recv) may be called from several goroutines at once on one connection,
// while other goroutines wait for and poll its CQs (cq.CQ is safe for
// concurrent use). Concurrent NextEvent calls each get a different event;
// GetSendComp and GetRecvComp may run concurrently, also on a shared
// completion channel, and each completion goes to exactly one caller.
// Close and Disconnect may be called from any goroutine at any time, also
// while others wait (the waits return an error matching os.ErrClosed);
// the getters are safe for concurrent use. The methods of a ConnReq are
// safe for concurrent use too: Connect consumes it (a second Connect
// returns an error matching os.ErrClosed), and Close may be called from
// any goroutine at any time.
//
// # Dead peers on Soft-RoCE
//
// With a retry count of 7 (librpma's, and [DefaultRetryCount]), rxe
// retries for ever: when the other host vanishes, operations to it never
// fail. With [Config.RetryCount] 1 to 6 (or [NoRetries], a count of 0)
// on the connecting side they fail (IBV_WC_RETRY_EXC_ERR) after
// RetryCount+1 ACK timeouts, about 0.54 s each on kernel 6.12 and 2.2 s
// on 6.1. The accepting side's count is the connecting side's, and a side
// with nothing outstanding sends nothing to fail: set [Config.PeerTimeout]
// there, which makes the library report the connection lost (LOST, with
// rpma.ErrPeerTimeout) when the other side has not answered for that
// long. doc/failures.md has the measurements.
package conn
