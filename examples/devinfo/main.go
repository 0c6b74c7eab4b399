// Command devinfo lists the RDMA devices and the capabilities the library
// cares about: native atomic write and flush (else emulated), on-demand
// paging, and the state of port 1 (peer.Devices).
//
//	devinfo
package main

import (
	"fmt"
	"os"

	"github.com/gorpma/rpma/peer"
)

func main() {
	devs, err := peer.Devices()
	if err != nil {
		fmt.Fprintln(os.Stderr, "devinfo:", err)
		os.Exit(1)
	}
	if len(devs) == 0 {
		fmt.Fprintln(os.Stderr, "devinfo: no RDMA device")
		os.Exit(1)
	}
	for _, d := range devs {
		fmt.Printf("%s: port 1 %s, MTU %d\n", d.Name, d.PortState, d.ActiveMTU)
		fmt.Printf("  atomic write: %s\n", nativeOr(d.NativeAtomicWrite, "emulated (fenced 8-byte RDMA write)"))
		fmt.Printf("  flush:        %s\n", nativeOr(d.NativeFlush, "emulated (8-byte RDMA read)"))
		fmt.Printf("  ODP:          %v\n", d.ODP)
		fmt.Printf("  max QP %d, max CQE %d, max QP WR %d, max MR size %d\n", d.MaxQP, d.MaxCQE, d.MaxQPWR, d.MaxMRSize)
	}
}

func nativeOr(native bool, otherwise string) string {
	if native {
		return "native"
	}
	return otherwise
}
