// Package srq mirrors librpma's shared receive queues (struct rpma_srq,
// rpma_srq_cfg): one receive queue, and optionally one receive CQ, for
// many connections.
//
//	s, err := srq.New(p, nil)                // RQSize 20, RCQSize 20
//	cfg := &conn.Config{SRQ: s}              // rpma_conn_cfg_set_srq; the rest: defaults
//	... accept or connect with cfg ...
//	s.Recv(buf, 0, 64, ctx)                  // not conn.Conn.Recv
//	s.RCQ().Wait(ctx); s.RCQ().GetWC(wcs)    // WC.QPNum: which connection
//
// A connection with an SRQ posts no receives of its own (conn.Conn.Recv
// is an invalid argument). Its receives complete on the SRQ's receive CQ
// when it has one, else on the connection's receive CQ (or main CQ). As
// in librpma, a shared completion channel cannot be combined with an SRQ
// that has a receive CQ.
//
// Defaults: librpma's header documents 100 receives and a 100-entry CQ,
// its code uses 20 and 20; this package follows the code.
package srq
