// Package examples holds the bundled examples: Go ports of every librpma
// example, with the same command lines and wire conventions, one directory
// each (NAME/server and NAME/client, or NAME for a single program). See
// README.md for the list, `make demo` to run them all, and the integration
// test in this directory, which runs them inside the VM and checks what
// each server read or received against what its client sent.
package examples
