// Command devinfo lists the RDMA devices and the capabilities the library
// cares about: native atomic write and flush (else emulated), on-demand
// paging, and the state of port 1.
//
//	devinfo
package main

import (
	"fmt"
	"os"

	"github.com/gorpma/rpma/internal/ibv"
)

func main() {
	names, err := ibv.DeviceNames()
	if err != nil {
		fmt.Fprintln(os.Stderr, "devinfo:", err)
		os.Exit(1)
	}
	if len(names) == 0 {
		fmt.Fprintln(os.Stderr, "devinfo: no RDMA device")
		os.Exit(1)
	}
	for _, n := range names {
		if err := show(n); err != nil {
			fmt.Fprintln(os.Stderr, "devinfo:", err)
			os.Exit(1)
		}
	}
}

func yesNo(b bool, no string) string {
	if b {
		return "native"
	}
	return no
}

func show(name string) error {
	ctx, err := ibv.OpenDevice(name)
	if err != nil {
		return err
	}
	defer ctx.Close()
	a, err := ctx.QueryDevice()
	if err != nil {
		return err
	}
	p, err := ctx.QueryPort(1)
	if err != nil {
		return err
	}
	fmt.Printf("%s: port 1 %s, MTU %d\n", name, p.State, p.ActiveMTU)
	fmt.Printf("  atomic write: %s\n", yesNo(a.NativeAtomicWrite(), "emulated (fenced 8-byte RDMA write)"))
	fmt.Printf("  flush:        %s\n", yesNo(a.NativeFlush(), "emulated (8-byte RDMA read)"))
	fmt.Printf("  ODP:          %v\n", a.ODP())
	fmt.Printf("  max QP %d, max CQE %d, max QP WR %d, max MR size %d\n", a.MaxQP, a.MaxCQE, a.MaxQPWR, a.MaxMRSize)
	return nil
}
