package session_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

// The whole path, both sides in one process: the server offers a region
// and its peer configuration, the client connects, writes and persists a
// record, and hangs up. 192.0.2.1 is the rxevm VM's Soft-RoCE device; on
// a real machine use an address of a netdev with an RDMA device, the
// server's on both sides.
//
// The server's memory is persistent memory where the machine has some
// (serverMemory maps the test VM's NVDIMM, Device DAX, with pmem.Map) and
// DRAM standing in for it elsewhere; a device with native flush (rxe from
// Linux 6.2, with rdma-core 45 or later) registers only persistent memory
// for a persistent flush. A real server declares DirectWriteToPMem only
// where its platform writes RDMA data straight into the persistence
// domain.
func Example() {
	const addr = "192.0.2.1"
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The server's memory, offered for writes and persistent flushes.
	logMem, release := serverMemory(1 << 20)
	defer release()
	logMR, err := mr.Reg(p, logMem, mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	if err != nil {
		log.Fatal(err)
	}
	defer logMR.Dereg()
	e, err := ep.Listen(p, addr, "0") // session.Serve listens and accepts in one call
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan error)
	go func() {
		c, err := session.Accept(ctx, e, nil, logMR, peer.Cfg{DirectWriteToPMem: true})
		if err != nil {
			served <- err
			return
		}
		err = session.WaitForHangup(ctx, c) // the client does the rest
		// Closed before saying so: the peer's Close below refuses
		// while a connection on it is open.
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		served <- err
	}()

	// The client: its source buffer, the connection and the server's region.
	srcMem, err := pmem.Alloc(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer srcMem.Close()
	src, err := mr.Reg(p, srcMem.Bytes(), mr.UsageWriteSrc)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Dereg()
	c, dst, err := session.Connect(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := copy(srcMem.Bytes(), "record 1: durable once WriteAndPersist returns")
	if err := session.WriteAndPersist(ctx, c, dst, 0, src, 0, n); err != nil {
		log.Fatal(err)
	}
	if err := session.Hangup(ctx, c); err != nil {
		log.Fatal(err)
	}
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the server has %q\n", logMem[:n])
	// Device output:
	// the server has "record 1: durable once WriteAndPersist returns"
}

// serverMemory returns n bytes of persistent memory, in the last quarter of
// the test VM's NVDIMM, where it is Device DAX ($RPMA_TEST_PMEM), else of
// DRAM; release unmaps them.
func serverMemory(n int) (mem []byte, release func()) {
	var r *pmem.Region
	var err error
	if os.Getenv("RPMA_TEST_PMEM_MODE") == "devdax" {
		if r, err = pmem.Map(os.Getenv("RPMA_TEST_PMEM"), 0); err == nil {
			return r.Bytes()[r.Len()*3/4:][:n], func() { r.Close() }
		}
	} else if r, err = pmem.Alloc(n); err == nil {
		return r.Bytes(), func() { r.Close() }
	}
	log.Fatal(err)
	return nil, nil
}

// The private data Accept sends, byte for byte: librpma's examples'
// struct common_data, so C peers understand it.
func ExampleOffer() {
	o := session.Offer{MRDesc: make([]byte, mr.DescriptorSize), PeerCfgDesc: []byte{1}}
	b, _ := o.MarshalBinary()
	fmt.Println(len(b), b[:4], b[25])
	var got session.Offer
	_ = got.UnmarshalBinary(append(b, make([]byte, 168)...)) // rdma_cm pads what it delivers
	cfg, _ := got.PeerCfg()
	fmt.Println(len(got.MRDesc), cfg.DirectWriteToPMem)
	// Output:
	// 28 [0 0 21 1] 1
	// 21 true
}

// A remote region as Go's io.WriterAt and io.ReaderAt: the client writes
// a string from the Go heap, durable when WriteAt returns, and reads it
// back; any number of goroutines may do so at once. Set-up as in the
// package example.
func ExampleRegion() {
	const addr = "192.0.2.1"
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	logMem, release := serverMemory(1 << 20)
	defer release()
	logMR, err := mr.Reg(p, logMem, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	if err != nil {
		log.Fatal(err)
	}
	defer logMR.Dereg()
	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan error)
	go func() {
		c, err := session.Accept(ctx, e, nil, logMR, peer.Cfg{DirectWriteToPMem: true})
		if err != nil {
			served <- err
			return
		}
		err = session.WaitForHangup(ctx, c)
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		served <- err
	}()

	c, dst, err := session.Connect(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	r, err := session.NewRegion(p, c, dst, nil) // durable writes, 16 slots of 64 KiB
	if err != nil {
		log.Fatal(err)
	}
	record := []byte("record 7: a Go slice, durable when WriteAt returns")
	if _, err := r.WriteAt(record, 4096); err != nil {
		log.Fatal(err)
	}
	back := make([]byte, len(record))
	if _, err := r.ReadAt(back, 4096); err != nil {
		log.Fatal(err)
	}
	if err := r.Close(); err != nil {
		log.Fatal(err)
	}
	if err := session.Hangup(ctx, c); err != nil {
		log.Fatal(err)
	}
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read back %q\n", back)
	// Device output:
	// read back "record 7: a Go slice, durable when WriteAt returns"
}
