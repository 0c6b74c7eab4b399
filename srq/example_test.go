package srq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
	"github.com/gorpma/rpma/srq"
)

// A server receives the messages of two clients on one shared receive
// queue: its receives are posted once, on the SRQ, and complete on the
// SRQ's receive CQ, where WC.QPNum tells the connections apart.
func ExampleNew() {
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
	buf, err := mr.Reg(p, mem.Bytes(), mr.UsageSend|mr.UsageRecv)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Dereg()

	s, err := srq.New(p, nil) // 20 receives, a 20-entry receive CQ
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // refused while connections use it: closed after them
	for i := 0; i < 2; i++ {
		if err := s.Recv(buf, i*64, 64, uint64(i)); err != nil {
			log.Fatal(err)
		}
	}
	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()

	names := map[uint32]string{} // the server side's QP number -> client
	for _, name := range []string{"alice", "bob"} {
		cfg := conn.DefaultConfig()
		cfg.SRQ = s
		accepted := make(chan *conn.Conn)
		go func() {
			c, err := session.Accept(ctx, e, cfg, nil, peer.Cfg{})
			if err != nil {
				log.Fatal(err)
			}
			accepted <- c
		}()
		client, _, err := session.Connect(ctx, p, addr, e.Port(), nil)
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		server := <-accepted
		defer server.Close()
		names[server.QPNum()] = name

		off := 2048 + len(names)*64 // the client's message, from the same buffer
		n := copy(mem.Bytes()[off:], "hello from "+name)
		if err := client.Send(buf, off, n, rpma.CompletionAlways, 9); err != nil {
			log.Fatal(err)
		}
		if _, err := session.WaitFor(ctx, client.CQ(), 9); err != nil {
			log.Fatal(err)
		}
	}

	var wcs [2]cq.WC
	for got := 0; got < 2; {
		n, err := s.RCQ().GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			if err := s.RCQ().Wait(ctx); err != nil {
				log.Fatal(err)
			}
			continue
		} else if err != nil {
			log.Fatal(err)
		}
		for _, wc := range wcs[:n] {
			off := int(wc.OpContext) * 64
			fmt.Printf("%s: %q\n", names[wc.QPNum], mem.Bytes()[off:off+int(wc.ByteLen)])
		}
		got += n
	}
	// Device output (unordered):
	// alice: "hello from alice"
	// bob: "hello from bob"
}
