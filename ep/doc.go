// Package ep mirrors librpma's endpoint (struct rpma_ep): the passive side
// of connection setup.
//
//	e, err := ep.Listen(p, "192.0.2.1", "0") // "0": a free port
//	defer e.Close()
//	req, err := e.NextConnReq(ctx, nil)      // waits in Go's poller
//	c, err := req.Connect(pdata)             // accept
//	ev, err := c.NextEvent(ctx)              // rpma.ConnEstablished
//
// Every connection request is moved to its own event channel as soon as it
// arrives (rdma_migrate_id), so the endpoint's channel only ever carries
// connection requests, and requests and connections survive the
// endpoint's Shutdown.
//
// # Undecided requests
//
// A request NextConnReq returned is undecided until it is accepted
// (Connect) or rejected (Reject, Close). It holds its CM id and event
// channel only: its CQs and QP are created when it is accepted or a
// receive is posted on it. [Config.MaxUndecided] caps how many requests
// may be undecided; past it, NextConnReq rejects each further request as
// it arrives, so that its client sees REJECTED at once instead of waiting
// in the kernel's backlog:
//
//	e, err := (&ep.Config{Backlog: 64, MaxUndecided: 16}).Listen(p, addr, "0")
//
// Note that the accepting side's connection becomes ESTABLISHED only
// once the connecting side has read its own event (librdmacm sends the
// last handshake message from rdma_get_cm_event), so a program playing
// both sides reads the client's event first.
//
// # Waiting
//
// NextConnReq waits in Go's runtime poller, not in a blocked OS thread,
// and returns ctx.Err() promptly when its context ends. The channel's fd
// ([Endpoint.FD]) is non-blocking, for callers that run their own epoll
// loop.
//
// # IPv6
//
// Listen takes IPv6 addresses as well as IPv4 ones ("2001:db8::1",
// "fe80::1%eth0"), as rdma_getaddrinfo does, and [Endpoint.Addr] reports
// them. To be reachable, the address must belong to an RDMA device's
// network interface. rdma_cm binds loopback addresses ("::1",
// "127.0.0.1") without a device, so listening on them succeeds, but
// Soft-RoCE (rxe) cannot carry loopback traffic: a connection request to
// them fails in route resolution with ENODEV.
package ep
