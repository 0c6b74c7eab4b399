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
