//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "rxevm: runs on Linux only (it boots a Linux VM with qemu)")
	os.Exit(125)
}
