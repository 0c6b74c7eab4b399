// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2021-2022, Fujitsu
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/06-multiple-connections/server.c
//   examples/06scch-multiple-connections/server.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/rpma"
)

// ServeClients runs the servers of 06-multiple-connections and
// 06scch-multiple-connections, which serve up to ClientMax clients at a
// time: each connection request from e (made with cfg) gets the first free
// slot, is accepted (no private data) and, once established, handed to
// handle with its slot; then the server hangs up. A request that finds no
// free slot is rejected. After idle without any event (a request, an
// established connection, a handled one) it says "Server timed out." on
// stderr and returns nil, once every connection has ended.
//
// The C servers multiplex the endpoint's, the connections' and the CQs'
// file descriptors with epoll in one thread; here each connection has a
// goroutine that waits in the library's (poller-based) calls, and the
// slots and the idle timeout are kept by the caller's goroutine. handle
// runs in a connection's goroutine; what goes wrong in it is reported on
// stderr as "[<slot>] <error>".
func ServeClients(e *ep.Endpoint, cfg *conn.Config, idle time.Duration,
	handle func(ctx context.Context, slot int, c *conn.Conn) error) error {
	// at the end: stop every goroutine and wait for them
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	// what the goroutines tell this one
	type event struct {
		req  *conn.ConnReq // a connection request
		err  error         // the endpoint failed
		slot int           // the slot of a connection, for done
		done bool          // the connection is gone
	}
	events := make(chan event)
	send := func(ev event) bool {
		select {
		case events <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}

	// the endpoint's connection requests
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			req, err := e.NextConnReq(ctx, cfg)
			if !send(event{req: req, err: err}) && req != nil {
				req.Close()
			}
			if err != nil {
				return
			}
		}
	}()

	busy := make(slots, ClientMax)
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			fmt.Fprintln(stderr, "Server timed out.")
			return nil
		case ev := <-events:
			timer.Reset(idle)
			switch {
			case ev.err != nil:
				return fmt.Errorf("ep.Endpoint.NextConnReq: %w", ev.err)
			case ev.req != nil:
				slot, ok := busy.take()
				if !ok {
					fmt.Fprintf(stderr, "no free slot for a new client (%d connected): rejected\n", ClientMax)
					ev.req.Reject()
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer send(event{slot: slot, done: true})
					serveClient(ctx, slot, ev.req, handle, func() { send(event{}) })
				}()
			case ev.done:
				busy.free(ev.slot)
			}
		}
	}
}

// serveClient accepts req, hands the established connection to handle and
// hangs up; notify tells the server that something happened.
func serveClient(ctx context.Context, slot int, req *conn.ConnReq,
	handle func(ctx context.Context, slot int, c *conn.Conn) error, notify func()) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()

	c, err := req.Connect(nil)
	if err != nil {
		req.Close()
		fmt.Fprintf(stderr, "[%d] conn.ConnReq.Connect: %v\n", slot, err)
		return
	}
	defer c.Close()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "[%d] conn.Conn.NextEvent: %v\n", slot, err)
		return
	}
	if ev != rpma.ConnEstablished {
		return // CLOSED or anything else: the client is gone
	}
	notify()

	if err := handle(ctx, slot, c); err != nil {
		fmt.Fprintf(stderr, "[%d] %v\n", slot, err)
	}
	notify()

	// hang up in every case
	if err := c.Disconnect(); err != nil {
		fmt.Fprintf(stderr, "[%d] conn.Conn.Disconnect: %v\n", slot, err)
		return
	}
	if _, err := c.NextEvent(ctx); err != nil {
		fmt.Fprintf(stderr, "[%d] conn.Conn.NextEvent: %v\n", slot, err)
	}
}

// slots are the places of the clients a server serves at once: true when
// taken.
type slots []bool

// take takes the first free slot; ok is false when all are taken.
func (s slots) take() (slot int, ok bool) {
	for i, taken := range s {
		if !taken {
			s[i] = true
			return i, true
		}
	}
	return -1, false
}

// free gives slot back.
func (s slots) free(slot int) { s[slot] = false }
