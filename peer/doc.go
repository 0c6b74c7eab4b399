// Package peer mirrors librpma's peer and peer configuration: the RDMA
// device behind an address ([DeviceForAddress], rpma_utils_get_ibv_context),
// the [Peer] (one protection domain on that device, rpma_peer_new) and the
// peer configuration [Cfg] with its one-byte descriptor.
//
// [ListenDevice] and [DialDevice] are DeviceForAddress under Go names,
// with a ctx; [Devices] lists the host's RDMA devices and what each can
// do.
//
// # Lifecycle
//
//	dev, err := peer.ListenDevice(ctx, "192.0.2.1") // or DeviceForAddress(addr, rpma.IbvContextLocal)
//	p, err := peer.New(dev)
//	... endpoints, connections ...
//	p.Close()   // refuses (EBUSY) while endpoints or connections are open
//	dev.Close() // refuses while peers are open
//
// Objects are closed explicitly: nothing is freed by the garbage collector,
// because a C object must never outlive its parent and finalizers run in
// no particular order. Close is idempotent and nil-safe everywhere.
//
// # Concurrency
//
// Device and Peer are safe for concurrent use by multiple goroutines:
// creating endpoints or connections on one Peer from several goroutines is
// fine, and a Close racing with them either wins (they then fail with an
// error matching rpma.ErrInvalidArgument and os.ErrClosed) or refuses.
//
// # Wire format
//
// [Cfg.Descriptor] and [CfgFromDescriptor] are byte-compatible with
// librpma's rpma_peer_cfg_get_descriptor and rpma_peer_cfg_from_descriptor:
// one byte, 0x00 or 0x01; any non-zero byte decodes as true.
package peer
