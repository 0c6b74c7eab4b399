// Package misuse holds the tests of what users get wrong: methods of nil
// and zero-value objects, and bad inputs to every public call. The zero
// and nil tests run anywhere; the bad-input table needs RDMA (the VM tier)
// and checks that nothing reaches the wire. It has no code of its own.
package misuse
