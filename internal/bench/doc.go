// Package bench compares the data path of this module with C librpma and
// with perftest, side by side in the same rxe VM, and turns the outputs
// into tables (cmd/benchtable). `make bench` (scripts/bench.sh) runs it;
// doc/performance.md gives the current figures and how to reproduce them,
// and doc/notes/performance-lab-notes.md ("What each row measures") each
// row's definition and every measurement.
//
// # What is compared
//
// Three programs measure the latency of the same operations on one rxe
// device (rxe's internal loopback: both ends of the connection live in the
// same VM):
//
//   - Go: conn's BenchmarkOps and BenchmarkPostUnsignaled
//     (conn/bench_linux_test.go), built on the host with go test -c. Each
//     sub-benchmark posts one operation with a completion and busy-polls
//     the CQ (cq.CQ.GetWC, 8 entries at a time, never Wait) until it
//     arrives.
//   - librpma: testdata/rpma_lat.c, one process with a listening
//     endpoint, an accepting thread and a connecting main thread on one
//     peer, default connection configuration, the same memory layout,
//     sizes, offsets, usages and completion flags, and the same busy poll
//     (rpma_cq_get_wc, 8 entries, never rpma_cq_wait). Its file comment
//     lists each operation and where it cannot match Go exactly: librpma
//     has no chained write+flush (Go's WriteAndFlush64 is compared with
//     rpma_write then rpma_flush); librpma leaves the periodic signaled
//     request of a run of unsignaled writes to the program (rpma_lat does
//     what the Go library does internally); and Debian's librpma 1.2.0
//     never uses the native atomic write, which the Go library uses on
//     Linux 6.2+ (the table's header says which path each side took).
//   - perftest, where it has a counterpart: ib_read_lat -s 64 (Read64),
//     ib_read_lat -s 8 (Flush, which without native flush is an 8-byte
//     RDMA read), ib_atomic_lat (AtomicWrite; fetch-and-add, the nearest
//     8-byte remote operation), ib_write_lat -s 64 (Write64) and
//     ib_send_lat -s 64 (SendRecv64). All run with -R (rdma_cm), server
//     and client in the same VM, and -C: they report TSC cycles, which
//     the guest kernel's TSC frequency converts, because perftest's own
//     estimate of the CPU's frequency fails under TCG (it prints inf) or
//     wanders from run to run. The write and send tests are ping-pongs
//     that report half a round trip, not a post-to-completion time: their
//     ratios are marked.
//
// # How
//
// Go and rpma_lat run in alternation, several rounds each, so that both
// see the same changes in the host's load; each round's figure is the
// mean of a fixed number of iterations (go test -benchtime=Nx; rpma_lat
// -n N) and the table shows the median over the rounds, and the median of
// the per-round Go/librpma ratios with their spread (each ratio taken
// between the runs of one round, which saw the same load). rpma_lat also
// prints the median and 99th percentile of its per-operation times;
// perftest prints its own (t_typical, 99%). Ratios are Go's ns/op divided
// by the other's. Nothing here asserts a time: the tests only check that
// rpma_lat builds without warnings, runs on a real device and prints
// every row, and that the rows cover every Go sub-benchmark.
//
// A change to the library is measured against its base the same way
// (scripts/bench-ab.sh, AB, cmd/abtable): two builds of the Go benchmarks
// and rpma_lat, in an order that rotates from round to round, compared by
// medians of per-round ratios.
package bench
