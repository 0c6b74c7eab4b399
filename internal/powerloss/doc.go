// Package powerloss is the power-loss test of the library's central
// promise: data a client wrote and flushed with FlushPersistent, to a server
// that declared direct write to persistent memory, is durable on the
// server's persistent memory before the client is told so.
//
// The test (TestPowerLoss, build tag vmhost, run on the host by make test)
// boots a server VM with an emulated NVDIMM as Device DAX and a client VM on
// the other end of a virtual wire with a netem delay. The client (plnode
// client) writes numbered records and flushes each; it prints "ACK round seq"
// when a record counts as acknowledged. The host kills the server VM at a
// random moment (qemu SIGKILL: a power loss that keeps the NVDIMM file),
// boots a fresh server on the same file, which first reports every record
// that survived (plnode server prints "HAVE round seq-ranges"), and the
// client reconnects for the next round. Acknowledged records that did not
// survive are losses; there must be none.
//
// The negative control acknowledges records when the write is posted
// instead of when its flush completes. With writes in flight on the delayed
// wire it must lose some: that proves the test can fail.
//
// This package holds the record layout both sides share; plnode is the
// program the VMs run.
package powerloss
