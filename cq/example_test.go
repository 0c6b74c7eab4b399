package cq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

// A completion's Err is nil on success, else a *rpma.WCError to match
// with errors.Is: here an operation flushed because its connection broke
// (or was disconnected) before it ran.
func ExampleWC_Err() {
	ok := cq.WC{OpContext: 1, Status: rpma.WCSuccess, Opcode: rpma.WCRDMAWrite}
	flushed := cq.WC{OpContext: 2, Status: rpma.WCWRFlushErr}
	fmt.Println(ok.Err())
	err := flushed.Err()
	fmt.Println(errors.Is(err, rpma.ErrCompletion), errors.Is(err, rpma.ErrWRFlushed))
	// Output:
	// <nil>
	// true true
}

// An event loop's way to collect a completion: poll with GetWC, and when
// there is none, TryWait, which never blocks (an event loop would wait for
// CQ.FD to be readable in its own epoll set; here a short sleep stands in
// for that). A blocking program calls CQ.Wait instead.
func ExampleCQ_TryWait() {
	const addr = "192.0.2.1" // the VM's rxe device
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
	mem, err := pmem.Alloc(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	m, err := mr.Reg(p, mem.Bytes(), mr.UsageWriteDst|mr.UsageWriteSrc)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Dereg()
	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s, err := session.Accept(ctx, e, nil, m, peer.Cfg{})
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		session.WaitForHangup(ctx, s)
	}()
	c, dst, err := session.Connect(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	copy(mem.Bytes(), "copy me")
	if err := c.Write(dst, 100, m, 0, 7, rpma.CompletionAlways, 1); err != nil {
		log.Fatal(err)
	}
	q := c.CQ()
	var wc [1]cq.WC
	for {
		if _, err := q.GetWC(wc[:]); err == nil {
			break
		} else if !errors.Is(err, rpma.ErrNoCompletion) {
			log.Fatal(err)
		}
		if err := q.TryWait(); errors.Is(err, rpma.ErrNoCompletion) {
			time.Sleep(time.Millisecond) // an event loop: epoll on q.FD()
		} else if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("op context %d: %v; %q\n", wc[0].OpContext, wc[0].Err(), mem.Bytes()[100:107])
	session.Hangup(ctx, c)
	<-served
	// Device output:
	// op context 1: <nil>; "copy me"
}

// A goroutine that busy-polls the CQs of many connections sweeps them:
// one crossing into C polls them all, and GetWC then hands out what the
// sweep found without crossing again. Here three connections each write
// once, and one loop collects the three completions.
func ExampleSweep() {
	const addr, conns = "192.0.2.1", 3 // the VM's rxe device
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
	mem, err := pmem.Alloc(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	m, err := mr.Reg(p, mem.Bytes(), mr.UsageWriteDst|mr.UsageWriteSrc)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Dereg()
	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan struct{})
	go func() {
		defer close(served)
		for range conns {
			s, err := session.Accept(ctx, e, nil, m, peer.Cfg{})
			if err != nil {
				log.Fatal(err)
			}
			defer s.Close()
			defer session.WaitForHangup(ctx, s)
		}
	}()
	defer func() { <-served }() // runs after the hang-ups deferred below

	var cqs []*cq.CQ
	for i := range conns {
		c, dst, err := session.Connect(ctx, p, addr, e.Port(), nil)
		if err != nil {
			log.Fatal(err)
		}
		defer c.Close()
		defer session.Hangup(ctx, c)
		if err := c.Write(dst, 8*i, m, 0, 8, rpma.CompletionAlways, uint64(10+i)); err != nil {
			log.Fatal(err)
		}
		cqs = append(cqs, c.CQ())
	}

	s, err := cq.NewSweep(cqs...)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ready := make([]int, len(cqs))
	var wcs [4]cq.WC
	got := make([]uint64, conns)
	for left := conns; left > 0; {
		n, err := s.Poll(ready) // one crossing for every CQ
		if err != nil {
			log.Fatal(err)
		}
		for _, i := range ready[:n] {
			k, err := cqs[i].GetWC(wcs[:]) // no crossing: the sweep polled
			if err != nil {
				continue // rpma.ErrNoCompletion: another goroutine took them
			}
			for _, wc := range wcs[:k] {
				if wc.Err() != nil {
					log.Fatal(wc.Err())
				}
				got[i] = wc.OpContext
				left--
			}
		}
	}
	fmt.Println("op contexts by connection:", got)
	// Device output:
	// op contexts by connection: [10 11 12]
}
