package core

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gorpma/rpma/rpma"
)

// The establishment bound: an accepted connection whose other side never
// completes the handshake (it connected and never read its events, or
// vanished after its request) gets no rdma_cm event at all, and without a
// bound it would hold its QP, CQs, id and fds for as long as the server
// runs. librpma has no bound; Linux bounds half-open TCP handshakes at
// about a minute.
//
// So an accepted connection watches its establishment with a timer (no
// goroutine of its own): if ESTABLISHED has not been read when the timer
// fires, the connection is lost as the liveness watch loses it (its QP to
// the error state, LOST queued for NextEvent, waits ending with a
// *rpma.ConnEventError), its cause an *establishTimeoutError. Closing it
// then releases everything.
//
// The endpoint counts its accepted connections that are not established
// yet (ListenParams.MaxEstablishing caps them): a connection leaves the
// count when its ESTABLISHED event is read (by NextEvent, a wait, a
// liveness tick or the timer) or when it is closed.

// establishWatch is an accepted connection's.
type establishWatch struct {
	timer *time.Timer
	count atomic.Pointer[atomic.Int64] // the endpoint's establishing count, until released
}

// establishTimeoutError is the cause of a connection lost because the
// other side did not complete the handshake in time.
type establishTimeoutError struct {
	d     time.Duration
	field string // the Config field that set d
}

func (e *establishTimeoutError) Error() string {
	return fmt.Sprintf("the other side did not complete the handshake within %v (conn.Config.%s)", e.d, e.field)
}

// Unwrap makes the cause match rpma.ErrPeerTimeout, as a silent peer's.
func (e *establishTimeoutError) Unwrap() error { return rpma.ErrPeerTimeout }

// establishBound returns how long an accepted connection may take to be
// established (0: no bound) and the Config field that says so.
func (p *ConnParams) establishBound() (time.Duration, string) {
	switch {
	case p.EstablishTimeout == NoEstablishTimeout:
		return 0, ""
	case p.EstablishTimeout > 0:
		return p.EstablishTimeout, "EstablishTimeout"
	case p.PeerTimeout > 0:
		return p.PeerTimeout, "PeerTimeout"
	}
	return DefaultEstablishTimeout, "EstablishTimeout"
}

// watchEstablishment starts the bound of an accepted connection (before
// its accept is sent) and counts it in count (nil: not counted).
func (c *Conn) watchEstablishment(prm *ConnParams, count *atomic.Int64) {
	w := &c.estab
	if count != nil {
		count.Add(1)
		w.count.Store(count)
	}
	d, field := prm.establishBound()
	c.ev.mu.Lock()
	defer c.ev.mu.Unlock()
	c.ev.onEstablished = c.stopEstablishWatch // the watch is over
	if d > 0 {
		w.timer = time.AfterFunc(d, func() { c.establishExpired(d, field) })
	}
}

// stopEstablishWatch stops the watch and takes c out of its endpoint's
// establishing count, once: when ESTABLISHED is read (connEvents' hook,
// its mu held) or at Close.
func (c *Conn) stopEstablishWatch() {
	if t := c.estab.timer; t != nil {
		t.Stop()
	}
	if n := c.estab.count.Swap(nil); n != nil {
		n.Add(-1)
	}
}

// establishExpired is the timer's: unless ESTABLISHED or a terminal
// event has been read by now (it reads what is pending), c is lost.
func (c *Conn) establishExpired(d time.Duration, field string) {
	if !c.enter() {
		return // closing
	}
	defer c.exit()
	if _, ended := c.ev.terminal(); ended || c.ev.isEstablished() {
		return
	}
	c.lose(&establishTimeoutError{d: d, field: field})
}
