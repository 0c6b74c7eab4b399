package ep_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// Listen on a free port, and take connection requests without blocking,
// as an event loop would when ep.Endpoint.FD is readable: TryNextConnReq
// returns rpma.ErrNoEvent while none is pending.
func ExampleEndpoint_TryNextConnReq() {
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
	e, err := ep.Listen(p, "192.0.2.1", "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()

	_, err = e.TryNextConnReq(nil)
	fmt.Println("before any client:", errors.Is(err, rpma.ErrNoEvent))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := conn.NewRequest(ctx, p, "192.0.2.1", e.Port(), nil)
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Connect([]byte("hi"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for {
		req, err := e.TryNextConnReq(nil)
		if errors.Is(err, rpma.ErrNoEvent) {
			time.Sleep(time.Millisecond) // an event loop would poll e.FD()
			continue
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("a request saying %q\n", req.PrivateData()[:2])
		req.Reject() // the client sees rpma.ConnRejected
		break
	}
	ev, _ := c.NextEvent(ctx)
	fmt.Println("client:", ev)
	// Device output:
	// before any client: true
	// a request saying "hi"
	// client: Connection rejected
}

// Cap the requests the application has taken but not decided: with one
// undecided, the endpoint rejects the next request as it arrives, and
// that client sees rpma.ConnRejected at once.
func ExampleConfig_Listen() {
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
	e, err := (&ep.Config{Backlog: 16, MaxUndecided: 1}).Listen(p, "192.0.2.1", "0")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dial := func() *conn.Conn {
		req, err := conn.NewRequest(ctx, p, "192.0.2.1", e.Port(), nil)
		if err != nil {
			log.Fatal(err)
		}
		c, err := req.Connect(nil)
		if err != nil {
			log.Fatal(err)
		}
		return c
	}
	first := dial()
	defer first.Close()
	req, err := e.NextConnReq(ctx, nil) // the first request: undecided
	if err != nil {
		log.Fatal(err)
	}
	second := dial()
	defer second.Close()
	got := make(chan error, 1)
	go func() { // rejects the second request when it arrives
		_, err := e.NextConnReq(ctx, nil)
		got <- err
	}()
	ev, _ := second.NextEvent(ctx)
	fmt.Println("second client:", ev, "refused:", e.Refused())
	req.Reject()
	ev, _ = first.NextEvent(ctx)
	fmt.Println("first client:", ev, "undecided:", e.Undecided())
	e.Shutdown()
	fmt.Println("NextConnReq:", errors.Is(<-got, os.ErrClosed))
	// Device output:
	// second client: Connection rejected refused: 1
	// first client: Connection rejected undecided: 0
	// NextConnReq: true
}
