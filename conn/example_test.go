package conn_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

// The examples that need an RDMA device run on 192.0.2.1, the address of
// the rxevm VM's Soft-RoCE device (make test runs them there and checks
// what they print; "Device output" is that output). Elsewhere, use an
// address of a netdev with an RDMA device. Each example plays both sides,
// server and client, in one process.
const addr = "192.0.2.1"

// openPeer opens the RDMA device of addr and a peer (a protection domain)
// on it; closing the peer closes both. Every device example starts here.
func openPeer() (p *peer.Peer, closePeer func()) {
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		log.Fatal(err)
	}
	p, err = peer.New(dev)
	if err != nil {
		log.Fatal(err)
	}
	return p, func() { p.Close(); dev.Close() }
}

// register maps n bytes of DRAM and registers them for usage; unregister
// undoes both. A device with native flush may register only persistent
// memory for mr.UsageFlushPersistent (rxe does): then the bytes are the
// test VM's NVDIMM (Device DAX at $RPMA_TEST_PMEM), in its last quarter.
func register(p *peer.Peer, n int, usage mr.Usage) (m *mr.Local, unregister func()) {
	mem, err := pmem.Alloc(n)
	if err != nil {
		log.Fatal(err)
	}
	b := mem.Bytes()
	m, err = mr.Reg(p, b, usage)
	if err != nil && usage&mr.UsageFlushPersistent != 0 && errors.Is(err, syscall.EINVAL) {
		mem.Close()
		if mem, err = pmem.Map(os.Getenv("RPMA_TEST_PMEM"), 0); err != nil {
			log.Fatal(err)
		}
		b = mem.Bytes()[mem.Len()*3/4:][:n]
		m, err = mr.Reg(p, b, usage)
	}
	if err != nil {
		log.Fatal(err)
	}
	return m, func() { m.Dereg(); mem.Close() }
}

// Connecting and accepting with librpma's calls: the server listens and
// accepts a request with its private data, the client connects, and both
// wait for ESTABLISHED; at the end the client hangs up and both see
// CLOSED. (Package session does all of this in Accept, Connect and
// Hangup.)
func ExampleNewRequest() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	e, err := ep.Listen(p, addr, "0") // port 0: a free one, e.Port()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()

	server := make(chan *conn.Conn)
	go func() {
		req, err := e.NextConnReq(ctx, nil) // nil: the default conn.Config
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("server: request says %q\n", req.PrivateData()[:5])
		c, err := req.Connect([]byte("world")) // accept, with private data
		if err != nil {
			log.Fatal(err)
		}
		if ev, err := c.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
			log.Fatal(ev, err)
		}
		server <- c
	}()

	req, err := conn.NewRequest(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	c, err := req.Connect([]byte("hello")) // consumes req
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("client:", ev)
	fmt.Printf("client: accept says %q\n", c.PrivateData()[:5])
	s := <-server
	defer s.Close()

	// The client hangs up: both sides get CLOSED (the client's once the
	// server has disconnected too).
	c.Disconnect()
	ev, _ = s.NextEvent(ctx)
	fmt.Println("server:", ev)
	s.Disconnect()
	ev, _ = c.NextEvent(ctx)
	fmt.Println("client:", ev)
	// Device output:
	// server: request says "hello"
	// client: Connection established
	// client: accept says "world"
	// server: Connection closed
	// client: Connection closed
}

// Write, then flush to persistence, and wait for the flush's completion
// with the poll-then-wait loop of package cq: when it completes, the
// written bytes are durable on the server. FlushPersistent needs the
// server's declaration of direct write to persistent memory (which
// session.Connect applies) and a region registered with
// mr.UsageFlushPersistent; here DRAM stands in for persistent memory (a
// real server maps it with pmem.Map and declares direct write only where
// its platform writes RDMA data straight to persistence).
func ExampleConn_WriteAndFlush() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target, unreg := register(p, 4096, mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	defer unreg()
	src, unreg := register(p, 4096, mr.UsageWriteSrc)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s, err := session.Accept(ctx, e, nil, target, peer.Cfg{DirectWriteToPMem: true})
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

	n := copy(src.Bytes(), "durable bytes")
	// One chain: the write (unsignaled) and its flush (signaled, op
	// context 1).
	if err := c.WriteAndFlush(dst, 0, src, 0, n, rpma.FlushPersistent, rpma.CompletionAlways, 1); err != nil {
		log.Fatal(err)
	}
	var wc [1]cq.WC
	for {
		_, err := c.CQ().GetWC(wc[:])
		if err == nil {
			break
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			log.Fatal(err)
		}
		if err := c.CQ().Wait(ctx); err != nil { // nothing yet: wait for an event
			log.Fatal(err)
		}
	}
	if err := wc[0].Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("op context %d is done: the server has %q\n", wc[0].OpContext, target.Bytes()[:n])
	session.Hangup(ctx, c)
	<-served // the server has closed its side
	// Device output:
	// op context 1 is done: the server has "durable bytes"
}

// Read the server's memory: the server registers it with
// mr.UsageReadSrc, the client reads into memory registered with
// mr.UsageReadDst.
func ExampleConn_Read() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exposed, unreg := register(p, 4096, mr.UsageReadSrc)
	defer unreg()
	copy(exposed.Bytes(), "the server's bytes")
	dst, unreg := register(p, 4096, mr.UsageReadDst)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s, err := session.Accept(ctx, e, nil, exposed, peer.Cfg{})
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		session.WaitForHangup(ctx, s)
	}()
	c, src, err := session.Connect(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if err := c.Read(dst, 0, src, 4, 14, rpma.CompletionAlways, 7); err != nil {
		log.Fatal(err)
	}
	if _, err := session.WaitFor(ctx, c.CQ(), 7); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read %q\n", dst.Bytes()[:14])
	session.Hangup(ctx, c)
	<-served // the server has closed its side
	// Device output:
	// read "server's bytes"
}

// Append to a remote log, librpma's example 07 in short: write a record,
// flush it, then move the log's end with an 8-byte atomic write (fenced:
// it is ordered after the flush) and flush that too.
func ExampleConn_AtomicWrite() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The log: its end (a little-endian uint64) at 0, records from 8.
	logMR, unreg := register(p, 4096, mr.UsageWriteDst|mr.UsageFlushVisibility)
	defer unreg()
	src, unreg := register(p, 4096, mr.UsageWriteSrc)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s, err := session.Accept(ctx, e, nil, logMR, peer.Cfg{})
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

	n := copy(src.Bytes(), "first record")
	if err := c.WriteAndFlush(dst, 8, src, 0, n, rpma.FlushVisibility, rpma.CompletionAlways, 1); err != nil {
		log.Fatal(err)
	}
	if _, err := session.WaitFor(ctx, c.CQ(), 1); err != nil {
		log.Fatal(err)
	}
	var end [8]byte
	binary.LittleEndian.PutUint64(end[:], uint64(8+n))
	if err := c.AtomicWrite(dst, 0, end, rpma.CompletionOnError, 2); err != nil {
		log.Fatal(err)
	}
	if err := c.Flush(dst, 0, 8, rpma.FlushVisibility, rpma.CompletionAlways, 3); err != nil {
		log.Fatal(err)
	}
	if _, err := session.WaitFor(ctx, c.CQ(), 3); err != nil {
		log.Fatal(err)
	}
	mem := logMR.Bytes()
	used := binary.LittleEndian.Uint64(mem)
	fmt.Printf("the log ends at %d: %q\n", used, mem[8:used])
	session.Hangup(ctx, c)
	<-served // the server has closed its side
	// Device output:
	// the log ends at 20: "first record"
}

// Messages: the server posts its receive on the request, before it
// accepts (ConnReq.Recv), so that the client's first send has somewhere
// to land; the client sends, the server's receive completes with the
// bytes.
func ExampleConn_Send() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, unreg := register(p, 4096, mr.UsageRecv)
	defer unreg()
	out, unreg := register(p, 4096, mr.UsageSend)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	received, served := make(chan string), make(chan struct{})
	go func() {
		defer close(served)
		req, err := e.NextConnReq(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		if err := req.Recv(in, 0, 64, 10); err != nil {
			log.Fatal(err)
		}
		s, err := req.Connect(nil)
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		if ev, err := s.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
			log.Fatal(ev, err)
		}
		wc, err := session.WaitFor(ctx, s.CQ(), 10)
		if err != nil {
			log.Fatal(err)
		}
		received <- fmt.Sprintf("%d bytes: %q", wc.ByteLen, in.Bytes()[:wc.ByteLen])
		session.WaitForHangup(ctx, s)
	}()
	c, _, err := session.Connect(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := copy(out.Bytes(), "a message")
	if err := c.Send(out, 0, n, rpma.CompletionAlways, 20); err != nil {
		log.Fatal(err)
	}
	if _, err := session.WaitFor(ctx, c.CQ(), 20); err != nil {
		log.Fatal(err)
	}
	fmt.Println("server got", <-received)
	session.Hangup(ctx, c)
	<-served // the server has closed its side
	// Device output:
	// server got 9 bytes: "a message"
}

// A shared completion channel (Config.SharedCompChannel) with a receive
// CQ: one Wait covers both CQs and says which one got the event; the
// caller then drains that CQ.
func ExampleConn_Wait() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	buf, unreg := register(p, 4096, mr.UsageSend|mr.UsageRecv)
	defer unreg()
	peerBuf, unreg := register(p, 4096, mr.UsageSend|mr.UsageRecv)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	served := make(chan struct{})
	go func() { // the other side: answers one message
		defer close(served)
		req, err := e.NextConnReq(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		if err := req.Recv(peerBuf, 0, 8, 1); err != nil {
			log.Fatal(err)
		}
		s, err := req.Connect(nil)
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		s.NextEvent(ctx) // ESTABLISHED
		if _, err := session.WaitFor(ctx, s.CQ(), 1); err != nil {
			log.Fatal(err)
		}
		if err := s.Send(peerBuf, 0, 8, rpma.CompletionOnError, 2); err != nil {
			log.Fatal(err)
		}
		session.WaitForHangup(ctx, s)
	}()

	cfg := conn.DefaultConfig()
	cfg.RCQSize = 10
	cfg.SharedCompChannel = true
	c, _, err := session.Connect(ctx, p, addr, e.Port(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Recv(buf, 8, 8, 3); err != nil { // for the answer
		log.Fatal(err)
	}
	copy(buf.Bytes(), "question")
	if err := c.Send(buf, 0, 8, rpma.CompletionAlways, 4); err != nil {
		log.Fatal(err)
	}
	// Both completions come through the one channel, in either order.
	var wcs [2]cq.WC
	for got := 0; got < 2; {
		q, isRCQ, err := c.Wait(ctx)
		if err != nil {
			log.Fatal(err)
		}
		n, err := q.GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			continue // a spurious wake-up
		} else if err != nil {
			log.Fatal(err)
		}
		for _, wc := range wcs[:n] {
			if isRCQ {
				fmt.Printf("receive CQ: %s %q\n", wc.Opcode, buf.Bytes()[8:16])
			} else {
				fmt.Printf("main CQ: %s\n", wc.Opcode)
			}
		}
		got += n
	}
	session.Hangup(ctx, c)
	<-served // the server has closed its side
	// Device output (unordered):
	// main CQ: IBV_WC_SEND
	// receive CQ: IBV_WC_RECV "question"
}

// A ping-pong loop with separate send and receive CQs
// (Config.RCQSize > 0), written with GetSendComp and GetRecvComp: each
// call returns exactly one completion, waiting in Go's runtime poller
// until it comes.
func ExampleConn_GetRecvComp() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	buf, unreg := register(p, 4096, mr.UsageSend|mr.UsageRecv)
	defer unreg()
	echoBuf, unreg := register(p, 4096, mr.UsageSend|mr.UsageRecv)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	const rounds = 3
	served := make(chan struct{})
	go func() { // the other side: adds one to each counter and sends it back
		defer close(served)
		cfg := conn.DefaultConfig()
		cfg.RCQSize = 10
		req, err := e.NextConnReq(ctx, cfg)
		if err != nil {
			log.Fatal(err)
		}
		if err := req.Recv(echoBuf, 0, 8, 0); err != nil {
			log.Fatal(err)
		}
		s, err := req.Connect(nil)
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		s.NextEvent(ctx) // ESTABLISHED
		mem := echoBuf.Bytes()
		for i := 0; i < rounds; i++ {
			if _, err := s.GetRecvComp(ctx); err != nil {
				log.Fatal(err)
			}
			v := binary.LittleEndian.Uint64(mem) + 1
			if err := s.Recv(echoBuf, 0, 8, 0); err != nil { // the next one
				log.Fatal(err)
			}
			binary.LittleEndian.PutUint64(mem[8:], v)
			if err := s.Send(echoBuf, 8, 8, rpma.CompletionAlways, 1); err != nil {
				log.Fatal(err)
			}
			if _, err := s.GetSendComp(ctx); err != nil {
				log.Fatal(err)
			}
		}
		// This side hangs up: the client's receive of the last reply
		// can complete before its acknowledgement of that send leaves
		// (rxe), so a client that hung up first could end the wait
		// above with CLOSED.
		session.Hangup(ctx, s)
	}()

	cfg := conn.DefaultConfig()
	cfg.RCQSize = 10
	c, _, err := session.Connect(ctx, p, addr, e.Port(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	mem := buf.Bytes()
	v := uint64(40)
	for i := uint64(0); i < rounds; i++ {
		// The reply's receive first, so that it is there when it comes.
		if err := c.Recv(buf, 8, 8, i); err != nil {
			log.Fatal(err)
		}
		binary.LittleEndian.PutUint64(mem, v)
		if err := c.Send(buf, 0, 8, rpma.CompletionAlways, i); err != nil {
			log.Fatal(err)
		}
		if _, err := c.GetSendComp(ctx); err != nil { // the send is done
			log.Fatal(err)
		}
		if _, err := c.GetRecvComp(ctx); err != nil { // the reply is in mem[8:16]
			log.Fatal(err)
		}
		v = binary.LittleEndian.Uint64(mem[8:])
		fmt.Println("got", v)
	}
	session.WaitForHangup(ctx, c) // the server hangs up once its last send is done
	<-served
	// Device output:
	// got 41
	// got 42
	// got 43
}

// Configurations are plain values, checked before they are used. A
// literal sets only the fields it cares about: the others, left zero,
// mean their defaults, which DefaultConfig spells out.
func ExampleConfig_Validate() {
	def := conn.DefaultConfig()
	fmt.Println(def.Timeout, def.CQSize, def.SQSize, def.RQSize, def.RetryCount)
	cfg := &conn.Config{PeerTimeout: time.Second, RetryCount: conn.NoRetries}
	fmt.Println(cfg.Validate())
	cfg.CQSize = -1
	err := cfg.Validate()
	fmt.Println(errors.Is(err, rpma.ErrInvalidArgument))
	// Output:
	// 1s 10 10 10 7
	// <nil>
	// true
}

// Serving a client only part of a region, and taking it back: the region
// is registered with mr.UsageGranted (no remote access of its own), the
// server grants the connection 64 bytes of it once the connection is up,
// and the client uses the grant's descriptor as a region's. After Revoke
// the client's write fails with a remote access error. (The descriptor
// would normally travel in a message, as in examples/grant; here both
// sides are in one process.)
func ExampleConn_Grant() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shared, unreg := register(p, 4096, mr.UsageGranted|mr.UsageWriteDst)
	defer unreg()
	src, unreg := register(p, 4096, mr.UsageWriteSrc)
	defer unreg()

	e, err := ep.Listen(p, addr, "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()
	server := make(chan *conn.Conn)
	go func() {
		req, err := e.NextConnReq(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		s, err := req.Connect(nil)
		if err != nil {
			log.Fatal(err)
		}
		if ev, err := s.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
			log.Fatal(ev, err)
		}
		server <- s
	}()
	req, err := conn.NewRequest(ctx, p, addr, e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	c, err := req.Connect(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if ev, err := c.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
		log.Fatal(ev, err)
	}
	s := <-server
	defer s.Close()

	// The server: 64 bytes at offset 1024, for this connection only.
	g, err := s.Grant(ctx, shared, 1024, 64, mr.UsageWriteDst)
	if err != nil {
		log.Fatal(err)
	}
	desc := g.Descriptor() // 21 bytes, librpma's region descriptor form

	// The client.
	dst, err := mr.RemoteFromDescriptor(desc[:])
	if err != nil {
		log.Fatal(err)
	}
	write := func(opContext uint64) error {
		n := copy(src.Bytes(), "granted bytes")
		if err := c.Write(dst, 0, src, 0, n, rpma.CompletionAlways, opContext); err != nil {
			return err
		}
		var wc [1]cq.WC
		for {
			_, err := c.CQ().GetWC(wc[:])
			if err == nil {
				return wc[0].Err()
			}
			if !errors.Is(err, rpma.ErrNoCompletion) {
				return err
			}
			if err := c.CQ().Wait(context.Background()); err != nil {
				return err
			}
		}
	}
	if err := write(1); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the server has %q at 1024\n", shared.Bytes()[1024:1024+13])

	// The server takes it back.
	if err := g.Revoke(); err != nil {
		log.Fatal(err)
	}
	err = write(2)
	fmt.Println("after Revoke:", errors.Is(err, &rpma.WCError{Status: rpma.WCRemAccessErr}))
	// Device output:
	// the server has "granted bytes" at 1024
	// after Revoke: true
}
