// Package conn mirrors librpma's connection configuration, connection
// requests and connections (struct rpma_conn_cfg, rpma_conn_req,
// rpma_conn).
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
// [rpma.ConnClosed] before it disconnects and closes.
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
// non-blocking, and a dup of it is registered with the poller, so no OS
// thread is blocked per waiter. It returns ctx.Err() as soon as ctx is
// cancelled or its deadline passes. [Conn.EventFD] is the raw fd for
// callers that run their own epoll loop.
//
// # Lifetimes and concurrency
//
// Each request and connection has its own rdma_cm event channel: an
// incoming request is moved to it (rdma_migrate_id) as soon as it arrives,
// so connections do not depend on their endpoint. A connection owns its
// QP, CQs and CM id; Close destroys them in librpma's order. The peer
// refuses to close while requests or connections are open.
//
// A Conn (like a ConnReq) is used by one goroutine at a time, as librpma's
// connections are used by one thread at a time. Close and Disconnect may
// be called from any goroutine at any time, also while another goroutine
// waits in NextEvent; the getters are safe for concurrent use.
//
// # Dead peers on Soft-RoCE
//
// rxe treats a retry count of 7 (librpma's, and [DefaultRetryCount]) as
// "retry forever": when the other host vanishes, operations never fail,
// and only the connection's events tell. [Config.RetryCount] and
// [Config.RNRRetryCount] make the counts configurable.
package conn
