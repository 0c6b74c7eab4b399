// Package session is the common path of a program on this module, in a
// few calls: one side offers a memory region, the other connects, uses it
// and hangs up. It is an addition beyond librpma, which has no such
// layer (its examples repeat these steps in examples/common); it is
// built only on the packages that mirror librpma (peer, ep, conn, mr, cq),
// and everything it returns is theirs, so a program can step down to them
// at any point.
//
// # The path
//
// The server registers memory and offers it:
//
//	e, err := ep.Listen(p, addr, port)                // or session.Serve for one client
//	c, err := session.Accept(ctx, e, nil, m, peer.Cfg{DirectWriteToPMem: true})
//	err = session.WaitForHangup(ctx, c)                // the client writes; it hangs up when done
//	c.Close()
//
// The client connects, gets the region, writes and persists, and hangs up:
//
//	c, dst, err := session.Connect(ctx, p, addr, port, nil)
//	err = session.WriteAndPersist(ctx, c, dst, 0, src, 0, n) // durable on return
//	err = session.Hangup(ctx, c)
//	c.Close()
//
// [Accept] sends the region's descriptor and the server's peer
// configuration in the accept's private data; [Connect] decodes them and
// applies the peer configuration ([conn.Conn.ApplyRemotePeerCfg]), which
// decides whether flushes to persistence are allowed. [WaitFor] waits for
// the completion of one operation, by its op context. Every wait takes a
// context: give it a deadline to bound it.
//
// A [Region] ([NewRegion]) is the connected region as Go's io.WriterAt
// and io.ReaderAt: ordinary byte slices in, durable when WriteAt
// returns, from any number of goroutines, without registering memory of
// one's own (the Region stages through its own).
//
// # The private data
//
// The layout is that of librpma's examples (struct common_data, [Offer]):
// a Go program on this package talks to librpma's C example servers and
// clients that exchange a region this way (05-flush-to-persistent sends
// both descriptors; most others send the region's only, and Connect then
// applies no peer configuration). Private data travels unauthenticated:
// exchange it over a network you trust.
//
// # What stays with the caller
//
// The device and the peer (peer.DeviceForAddress, peer.New), the memory
// and its registration (pmem.Alloc or pmem.Map, then mr.Reg), and Close
// of everything, in the reverse order. The helpers never close what they
// were given; on an error they close what they created themselves.
package session
