package core

import (
	"context"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"

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
// private data, the terminal event and the queue stay consistent.
type connEvents struct {
	ch *cmChannel
	// termFD is an eventfd that becomes readable, for good, once the
	// terminal event is read. Completion waits watch it: a waiter cannot
	// rely on the event channel's readiness when another goroutine may
	// read the event first.
	termFD int

	mu     sync.Mutex
	queue  []ibv.CMEvent // read by completion waits, not yet returned by NextEvent
	term   rpma.ConnEvent
	pdata  []byte // the other side's private data
	onTerm func(rpma.ConnEvent)
}

func newConnEvents(op string, ch *cmChannel, pdata []byte) (*connEvents, error) {
	fd, err := newEventFD()
	if err != nil {
		return nil, provider(op, os.NewSyscallError("eventfd", err))
	}
	return &connEvents{ch: ch, termFD: fd, term: rpma.ConnUndefined, pdata: pdata}, nil
}

// destroy destroys the channel and the eventfd; nothing may wait any
// more.
func (ev *connEvents) destroy() {
	ev.ch.destroy()
	if ev.termFD >= 0 {
		unix.Close(ev.termFD)
		ev.termFD = -1
	}
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
	if e.Type == ibv.EventEstablished && len(e.PrivateData) > 0 && ev.pdata == nil {
		ev.pdata = e.PrivateData
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

// next waits for the next event: one read ahead by a completion wait, or
// the channel's next.
func (ev *connEvents) next(ctx context.Context, op, what string) (ibv.CMEvent, error) {
	var (
		e      ibv.CMEvent
		evErr  error
		gotOne bool
	)
	err := ev.ch.w.wait(ctx, func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		if len(ev.queue) > 0 {
			e = ev.queue[0]
			ev.queue = ev.queue[1:]
			gotOne = true
			return true
		}
		r, err := ev.read()
		if err != nil && isAgain(err) {
			return false
		}
		e, evErr, gotOne = r, err, true
		return true
	})
	switch {
	case gotOne && evErr != nil:
		return e, provider(op, evErr)
	case gotOne:
		return e, nil
	case errors.Is(err, os.ErrClosed):
		return e, errClosed(op, what)
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return e, err
	default:
		return e, rpma.NewError(op, rpma.CodeProvider, 0, "waiting for an rdma_cm event: %v", err)
	}
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
				ev.queue = append(ev.queue, e) // read, but its ack failed
			}
			break // EAGAIN, or a failure NextEvent will report
		}
		ev.queue = append(ev.queue, e)
	}
	return ev.term, ev.term != rpma.ConnUndefined
}

// privateData returns a copy of the other side's private data.
func (ev *connEvents) privateData() []byte {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.pdata == nil {
		return nil
	}
	return append([]byte(nil), ev.pdata...)
}
