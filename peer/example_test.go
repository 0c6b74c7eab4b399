package peer_test

import (
	"fmt"
	"log"

	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// Every program starts here: the RDMA device of an address of this
// machine (192.0.2.1 is the rxevm VM's Soft-RoCE device), and a peer (a
// protection domain) on it. Close the peer before the device.
func ExampleNew() {
	dev, err := peer.DeviceForAddress("192.0.2.1", rpma.IbvContextLocal)
	if err != nil {
		log.Fatal(err) // without RDMA: an error matching rpma.ErrNotSupported or rpma.ErrProvider
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close() // refused (EBUSY) while regions or connections are open
	fmt.Println(dev.Name(), "on-demand paging:", p.ODP())
	// Device output:
	// rxe0 on-demand paging: false
}

// A peer configuration travels as a 1-byte descriptor, byte-compatible
// with librpma's.
func ExampleCfg_Descriptor() {
	d := peer.Cfg{DirectWriteToPMem: true}.Descriptor()
	fmt.Println(d)
	cfg, err := peer.CfgFromDescriptor(d[:])
	fmt.Println(cfg.DirectWriteToPMem, err)
	// Output:
	// [1]
	// true <nil>
}
