package mr_test

import (
	"errors"
	"fmt"
	"log"
	"syscall"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// Register memory for the other side to write into and flush, and hand
// it over as its 21-byte descriptor. The memory stays mapped while it is
// registered: pmem.Region.Close refuses until Dereg.
func ExampleReg() {
	dev, err := peer.DeviceForAddress("192.0.2.1", rpma.IbvContextLocal) // the VM's rxe device
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	mem, err := pmem.Alloc(1 << 20)
	if err != nil {
		log.Fatal(err)
	}
	m, err := mr.Reg(p, mem.Bytes(), mr.UsageWriteDst|mr.UsageFlushVisibility)
	if err != nil {
		log.Fatal(err) // beyond RLIMIT_MEMLOCK without CAP_IPC_LOCK: ENOMEM, and the error says so
	}
	d := m.Descriptor() // send these bytes to the other side
	r, _ := mr.RemoteFromDescriptor(d[:])
	fmt.Println(m.Size(), r.Size(), r.FlushUsage() == mr.UsageFlushVisibility)

	err = mem.Close()
	fmt.Println("close while registered:", errors.Is(err, syscall.EBUSY))
	m.Dereg()
	fmt.Println("close after Dereg:", mem.Close())
	// Device output:
	// 1048576 1048576 true
	// close while registered: true
	// close after Dereg: <nil>
}

// The other side's region, from the descriptor it sent: its size, its
// flush usages (which flushes a connection may post to it), and the same
// 21 bytes back, to hand on.
func ExampleRemoteFromDescriptor() {
	desc := []byte{
		0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, // address
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, // length: 1 MiB
		0x34, 0x12, 0x00, 0x00, // rkey
		byte(mr.UsageWriteDst | mr.UsageFlushPersistent | mr.UsageFlushVisibility),
	}
	r, err := mr.RemoteFromDescriptor(desc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Size(), r.FlushUsage()&mr.UsageFlushPersistent != 0)
	again := r.Descriptor()
	fmt.Println(string(again[:]) == string(desc))
	_, err = mr.RemoteFromDescriptor(desc[:20])
	fmt.Println(errors.Is(err, rpma.ErrInvalidArgument))
	// Output:
	// 1048576 true
	// true
	// true
}
