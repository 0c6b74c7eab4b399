package conn_test

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"
	"log"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// A connection's counters, published with expvar: a program that serves
// HTTP (expvar registers /debug/vars on http.DefaultServeMux) then shows
// them as JSON, read afresh at each request. For Prometheus, a
// prometheus.Collector whose Collect calls Stats and sends one
// MustNewConstMetric per counter (CounterValue; GaugeValue for the
// high-water marks) does the same without a background goroutine.
func ExampleConn_Stats() {
	p, closePeer := openPeer()
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dst, unreg := register(p, 4096, mr.UsageWriteDst)
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
		desc := dst.Descriptor()
		s, err := req.Connect(desc[:])
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
	remote, err := mr.RemoteFromDescriptor(c.PrivateData())
	if err != nil {
		log.Fatal(err)
	}

	expvar.Publish("rpma_conn", expvar.Func(func() any { return c.Stats() }))

	for range 2 {
		if err := c.WriteWait(ctx, remote, 0, src, 0, 512); err != nil {
			log.Fatal(err)
		}
	}

	// What /debug/vars would show under "rpma_conn".
	var shown rpma.ConnStats
	if err := json.Unmarshal([]byte(expvar.Get("rpma_conn").String()), &shown); err != nil {
		log.Fatal(err)
	}
	fmt.Println("writes:", shown.Writes, "bytes written:", shown.BytesWritten)
	fmt.Println("completions:", shown.CQ.Completions, "failed:", shown.CQ.Failed)
	// Device output:
	// writes: 2 bytes written: 1024
	// completions: 2 failed: 0
}
