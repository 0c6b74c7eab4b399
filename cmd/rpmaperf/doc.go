// Command rpmaperf measures an RDMA path with this module's own
// operations, as perftest's ib_write_lat, ib_read_bw and the like do, but
// also the operations perftest lacks: remote flushes (to visibility and to
// persistence), write-and-flush chains, the 8-byte atomic write, and
// compare-and-swap and fetch-and-add through package conn.
//
// Usage:
//
//	rpmaperf -server -addr IP [-port P] [-forever] [-direct-pmem=false] [-pmem PATH]
//	rpmaperf -addr IP [-port P] -op OPS [-size SIZES] [-depth D] [-iters N | -duration T]
//	         [-goroutines G] [-conns C] [-mode busy|event] [-json] [-check] [-stats] [-timeout T]
//
// rpmaperf -h lists every operation and flag. A bad flag or value exits
// with status 2 and one line on stderr; a failure (a failed call, a failed
// -check, a wait that outlasted -timeout) with status 1.
//
// # The server
//
// The server listens at -addr and -port (7204; 0 picks a free port) and
// prints "rpmaperf: server listening at IP port P". Each connection's
// client says in its connect's private data how much memory it needs (its
// largest size times its operations in flight, for a read area, a write
// area and the atomic words); the server registers a region that large for
// the connection (DRAM, or -pmem PATH: a file or Device DAX), fills the
// read area with a known pattern, and lends the region's extended
// descriptor and its peer configuration in the accept's private data. For
// sends it posts two receives per operation in flight and echoes every
// message from the buffer it landed in. It serves until the client's
// connections have all disconnected, then exits 0; with -forever it serves
// client after client until interrupted (SIGINT), and exits 0 then.
//
// The server declares direct write to persistent memory (-direct-pmem,
// default true) so that flush-persistent can be measured; on DRAM that
// measures the same wire operations as on persistent memory, without the
// durability. -direct-pmem=false makes flush-persistent fail, as librpma
// would, with rpma.ErrNotSupported.
//
// # The client
//
// The client opens -conns connections, and measures each operation of
// -op (a comma list, or all) at each size of -size (atomics are 8 bytes),
// one after the other, over all the connections at once:
//
//   - -mode busy (the default) is perftest's loop: one goroutine per
//     connection keeps -depth operations posted (the mirror's calls,
//     signaled) and polls the CQ with cq.CQ.GetWC, never sleeping;
//   - -mode event runs -goroutines goroutines per connection, each keeping
//     -depth operations in flight with the per-operation waiting calls
//     (conn.Conn.WriteWait, ReadWait, FlushWait, WriteAndFlushWait,
//     AtomicWriteWait, CompareAndSwapWait, FetchAndAddWait, SendWait and
//     the echo's receive by cq.CQ.WaitFor), one goroutine per operation in
//     flight.
//
// -iters is the number of operations per goroutine and connection (so a
// result counts iters × goroutines × conns), or -duration runs each
// operation for that long. A latency is the time from the post to the
// completion: a round trip for every operation (perftest's *_lat tools
// report half of a ping-pong; rpmaperf's send is the whole ping-pong). At
// depth 1 it is the latency; at larger depths, goroutines or connections
// the bandwidth and message rate are the figures to read. There is no
// warm-up.
//
// -check verifies the data: writes (and write-and-flush) are read back
// after the run and compared with the pattern the client wrote; reads must
// have brought the server's pattern; echoes must carry what was sent; each
// compare-and-swap must find the value the lane's previous one left, each
// fetch-and-add the previous value plus one, and the words, read back,
// must hold the last value written.
//
// -stats prints, after the results, each connection's counters
// (conn.Conn.Stats: posts by kind, bytes, completions, waits, refusals for
// room, high-water marks) as a line "stats conn=I" followed by their JSON.
//
// -timeout (10 s) bounds every wait: a run in which a goroutine sees no
// completion for that long fails, and it is each connection's peer timeout
// (conn.Config.PeerTimeout), so a client whose server vanished exits 1
// within about -timeout.
//
// # Output
//
// A table per run, as perftest's, with the bytes moved (iterations times
// size; for a flush, the size of the flushed range):
//
//	------------------------------------------------------------------------------------------------------------------------------------------
//	 rpmaperf  mode busy  depth 1  goroutines 1  conns 1  server 192.0.2.1 port 7204
//	------------------------------------------------------------------------------------------------------------------------------------------
//	 #op                        #bytes  #iterations  t_min[usec]  t_typical[usec]  t_99[usec]  t_99.9[usec]  t_max[usec]    BW[MB/s]  MsgRate[Mpps]   #bytes_moved
//	 write                          64          200       170.62           258.58     2304.32       4753.04      4753.04        0.17       0.002624          12800
//	 flush-persistent               64          200       169.43           270.59      558.70       3252.62      3252.62        0.19       0.002941          12800
//	 send                           64          200       373.19           999.83     5625.03       8775.83      8775.83        0.04       0.000662          12800
//
// (Soft-RoCE in a VM under TCG emulation.) t_typical is the median; the
// percentiles are nearest-rank. With -json each result is one JSON object
// per line instead, with the fields op, size, depth, goroutines, conns,
// mode, iters, min_us, p50_us, p99_us, p999_us, max_us, mb_per_s (1 MB =
// 10^6 bytes), mops (millions of operations per second), bytes and
// seconds (the run's wall time).
package main
