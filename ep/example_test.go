package ep_test

import (
	"context"
	"errors"
	"fmt"
	"log"
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
