package core

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// connEvents is the event side of a connection request and its
// connection: the rdma_cm channel, the events that completion waits read
// ahead of NextEvent, and the terminal event once one was read.
//
// Completion waits watch the channel too (a peer that disconnects or
// dies must end a wait on a CQ that will never fire), so events are read
// in two places; every read goes through read, under mu, so that the
// private data, the terminal event and the queue stay consistent, and an
// event is always either in the queue or still in the channel.
//
// The fd users get (Conn.EventFD) is userFD, an epoll instance of the
// library's that watches the channel and queueFD, an eventfd readable
// while the queue holds events: it is readable whenever NextEvent would
// return at once, also when a completion wait has moved the events from
// the channel into the queue.
type connEvents struct {
	ch *cmChannel
	// termFD is an eventfd that becomes readable, for good, once the
	// terminal event is read. Completion waits watch it: a waiter cannot
	// rely on the event channel's readiness when another goroutine may
	// read the event first.
	termFD  int
	queueFD int     // readable while queue is not empty
	userFD  int     // epoll of the channel and queueFD: Conn.EventFD
	w       *waiter // NextEvent's, on a dup of userFD: events queued without the channel (lose) wake it too

	established atomic.Bool // ESTABLISHED has been read

	mu        sync.Mutex
	queue     []ibv.CMEvent // read by completion waits, not yet returned by NextEvent
	term      rpma.ConnEvent
	termCause error  // why the library ended the connection itself (lose)
	pdata     []byte // the other side's private data
	onTerm    func(rpma.ConnEvent)
	// onEstablished is called (mu held) when ESTABLISHED is read: an
	// accepted connection's establishment watch (establish.go).
	onEstablished func()
	rewake        *time.Timer // signals termFD again at the end of the flush window (endflush.go)
}

func newConnEvents(op string, ch *cmChannel, pdata []byte) (*connEvents, error) {
	ev := &connEvents{ch: ch, termFD: -1, queueFD: -1, userFD: -1, term: rpma.ConnUndefined, pdata: pdata}
	var err error
	if ev.termFD, err = newEventFD(); err != nil {
		return nil, provider(op, os.NewSyscallError("eventfd", err))
	}
	if ev.queueFD, err = newEventFD(); err != nil {
		ev.closeFDs()
		return nil, provider(op, os.NewSyscallError("eventfd", err))
	}
	if ev.userFD, err = newEpoll(-1, ch.fd, ev.queueFD); err != nil {
		ev.closeFDs()
		return nil, provider(op, err)
	}
	if ev.w, err = newWaiter(ev.userFD, "rdma_cm events"); err != nil {
		ev.closeFDs()
		return nil, provider(op, err)
	}
	return ev, nil
}

// wake wakes NextEvent, which then returns errClosed; the connection (or
// request) is being closed.
func (ev *connEvents) wake() {
	ev.w.close()
	ev.ch.wake()
}

// closeFDs closes the library's fds, not the channel.
func (ev *connEvents) closeFDs() {
	ev.w.close()
	ev.mu.Lock()
	if ev.rewake != nil {
		ev.rewake.Stop()
	}
	closeFD(ev.termFD)
	ev.termFD = -1
	ev.mu.Unlock()
	closeFD(ev.userFD)
	closeFD(ev.queueFD)
	ev.userFD, ev.queueFD = -1, -1
}

// rewakeAfter signals termFD once more after d, unless it is closed by
// then: a completion wait parked in the poller (edge-triggered) after the
// end wakes and checks again (endflush.go). Once per connection.
func (ev *connEvents) rewakeAfter(d time.Duration) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.rewake != nil || ev.termFD < 0 {
		return
	}
	ev.rewake = time.AfterFunc(d, func() {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		if ev.termFD >= 0 {
			signalEventFD(ev.termFD)
		}
	})
}

// destroy destroys the channel and the library's fds; nothing may wait
// any more.
func (ev *connEvents) destroy() {
	ev.ch.destroy()
	ev.closeFDs()
}

// isTerminal reports whether e ends the connection (or its attempt).
func isTerminal(e rpma.ConnEvent) bool {
	switch e {
	case rpma.ConnClosed, rpma.ConnLost, rpma.ConnRejected, rpma.ConnUnreachable:
		return true
	}
	return false
}

// read reads one event from the channel without blocking; mu is held. It
// records the ESTABLISHED private data and the terminal event.
func (ev *connEvents) read() (ibv.CMEvent, error) {
	e, err := ev.ch.ch.GetEvent()
	if err != nil && isAgain(err) {
		return e, err
	}
	if e.Type == ibv.EventEstablished {
		ev.established.Store(true)
		if ev.onEstablished != nil {
			ev.onEstablished()
			ev.onEstablished = nil
		}
		if len(e.PrivateData) > 0 && ev.pdata == nil {
			ev.pdata = e.PrivateData
		}
	}
	if m, ok := mapEvent(e.Type); ok && isTerminal(m) && ev.term == rpma.ConnUndefined {
		ev.term = m
		if ev.onTerm != nil {
			ev.onTerm(m)
		}
		signalEventFD(ev.termFD)
	}
	return e, err
}

// lose ends the connection on the library's own account (a fatal
// asynchronous event, for example), unless it has ended already: LOST
// becomes its terminal event, queued for NextEvent (as a CONNECT_ERROR,
// which maps to LOST), and its completion waits end with a
// ConnEventError whose Cause is cause.
func (ev *connEvents) lose(cause error) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.term != rpma.ConnUndefined {
		return
	}
	ev.term, ev.termCause = rpma.ConnLost, cause
	if ev.onTerm != nil {
		ev.onTerm(rpma.ConnLost)
	}
	ev.push(ibv.CMEvent{Type: ibv.EventConnectError})
	signalEventFD(ev.termFD)
}

// isEstablished reports whether the connection's ESTABLISHED event has
// been read (by NextEvent or a completion wait).
func (ev *connEvents) isEstablished() bool { return ev.established.Load() }

// push queues e for NextEvent (mu held).
func (ev *connEvents) push(e ibv.CMEvent) {
	ev.queue = append(ev.queue, e)
	if len(ev.queue) == 1 {
		signalEventFD(ev.queueFD)
	}
}

// take returns the next event without blocking: the oldest one a
// completion wait read ahead, or the channel's next. got is false when
// there is none; err is a failed read (or a failed ack, with the event).
func (ev *connEvents) take() (e ibv.CMEvent, got bool, err error) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.queue) > 0 {
		e = ev.queue[0]
		ev.queue[0] = ibv.CMEvent{}
		ev.queue = ev.queue[1:]
		if len(ev.queue) == 0 {
			ev.queue = nil
			drainEventFD(ev.queueFD)
		}
		return e, true, nil
	}
	e, err = ev.read()
	if err != nil && isAgain(err) {
		return e, false, nil
	}
	return e, true, err
}

// next waits for the next event (an exclusive wait: each event goes to one
// caller). Errors as cmChannel.next.
func (ev *connEvents) next(ctx context.Context, op, what string) (ibv.CMEvent, error) {
	if err := ctx.Err(); err != nil {
		return ibv.CMEvent{}, err
	}
	if e, got, err := ev.take(); got {
		return e, provider(op, err)
	}
	var (
		e      ibv.CMEvent
		evErr  error
		gotOne bool
	)
	_, err := ev.w.wait(ctx, false, epoch{}, tryFunc(func() bool {
		e, gotOne, evErr = ev.take()
		return gotOne
	}))
	if gotOne {
		return e, provider(op, evErr)
	}
	return e, waitError(op, what, "an rdma_cm event", err)
}

// terminal reads the events available now (keeping them for NextEvent)
// and reports the terminal event, if one has been read, now or before.
// Completion waits call it whenever their CQ has nothing.
func (ev *connEvents) terminal() (rpma.ConnEvent, bool) {
	if ev == nil {
		return rpma.ConnUndefined, false
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for ev.term == rpma.ConnUndefined {
		e, err := ev.read()
		if err != nil {
			if !isAgain(err) && e.ID != nil {
				ev.push(e) // read, but its ack failed
			}
			break // EAGAIN, or a failure NextEvent will report
		}
		ev.push(e)
	}
	return ev.term, ev.term != rpma.ConnUndefined
}

// ended reports whether a completion wait must end because the
// connection has ended: with nil when leftover finds completions queued
// before the end (a completion the provider queued before the disconnect
// may be announced after it: rxe 6.1 raises the event from a tasklet),
// else with a *rpma.ConnEventError, unless flushing reports that flushed
// completions are still due (endflush.go): then the wait goes on. A nil
// ev (an SRQ's CQ) never ends.
func (ev *connEvents) ended(leftover func() bool, flushing func(cause error) bool) (bool, error) {
	e, ok := ev.terminal()
	if !ok {
		return false, nil
	}
	if leftover() {
		return true, nil
	}
	ev.mu.Lock()
	cause := ev.termCause
	ev.mu.Unlock()
	if flushing(cause) {
		return false, nil
	}
	return true, &rpma.ConnEventError{Event: e, Cause: cause}
}

// privateData returns a copy of the other side's private data.
func (ev *connEvents) privateData() []byte {
	if ev == nil {
		return nil
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.pdata == nil {
		return nil
	}
	return append([]byte(nil), ev.pdata...)
}
