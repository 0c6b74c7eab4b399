package core

import (
	"context"
	"errors"
	"os"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// cmChannel is an rdma_cm event channel whose fd is non-blocking and
// parked in the runtime poller.
type cmChannel struct {
	ch *ibv.EventChannel
	w  *waiter
	fd int
}

func newCMChannel(op string) (*cmChannel, error) {
	ch, err := ibv.CreateEventChannel()
	if err != nil {
		return nil, provider(op, err)
	}
	w, err := newWaiter(ch.FD(), "rdma_cm")
	if err != nil {
		ch.Destroy()
		return nil, provider(op, err)
	}
	return &cmChannel{ch: ch, w: w, fd: ch.FD()}, nil
}

// take reads the next event without blocking. got is false when there is
// none; err is a failed read, or a failed ack (with the event).
func (c *cmChannel) take() (e ibv.CMEvent, got bool, err error) {
	e, err = c.ch.GetEvent()
	if err != nil && isAgain(err) {
		return e, false, nil
	}
	if err != nil && e.Type == ibv.EventConnectRequest && e.ID != nil {
		// Read, but its ack failed: the error is reported, and the
		// request it brought (a new id) is refused rather than lost, as
		// librpma's rpma_conn_req_from_cm_event deletes it.
		e.ID.Reject(nil)
		e.ID.Destroy()
		e.ID = nil
	}
	return e, true, err
}

// next waits for the next event, copied and acknowledged (an exclusive
// wait: each event goes to one caller). Errors: ctx.Err() when ctx ends,
// errClosed(op, what) when the channel is woken by Close, an rpma
// provider error when rdma_get_cm_event fails (or the event was read but
// its ack failed: RPMA_E_PROVIDER, as in librpma).
func (c *cmChannel) next(ctx context.Context, op, what string) (ibv.CMEvent, error) {
	if err := ctx.Err(); err != nil {
		return ibv.CMEvent{}, err
	}
	if e, got, err := c.take(); got {
		return e, provider(op, err)
	}
	var (
		e      ibv.CMEvent
		evErr  error
		gotOne bool
	)
	_, err := c.w.wait(ctx, false, epoch{}, tryFunc(func() bool {
		e, gotOne, evErr = c.take()
		return gotOne
	}))
	if gotOne {
		return e, provider(op, evErr)
	}
	return e, waitError(op, what, "an rdma_cm event", err)
}

// waitError maps what a waiter's wait returned without the awaited
// arrival: os.ErrClosed becomes errClosed(op, what) (the object is being
// closed); the context's errors stay as they are; anything else becomes a
// provider error.
func waitError(op, what, awaited string, err error) error {
	switch {
	case err == nil:
		return rpmaerr.New(op, rpma.CodeUnknown, 0, "the wait for %s ended without it", awaited)
	case errors.Is(err, os.ErrClosed):
		return errClosed(op, what)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, new(*os.SyscallError)):
		return provider(op, err) // the call that failed, with its errno
	default:
		return rpmaerr.New(op, rpma.CodeProvider, 0, "waiting for %s: %v", awaited, err)
	}
}

// wake wakes a blocked next, which then returns errClosed.
func (c *cmChannel) wake() { c.w.close() }

// destroy wakes waiters and destroys the channel. Every id on it must have
// been destroyed or migrated.
func (c *cmChannel) destroy() {
	if c == nil {
		return
	}
	c.w.close()
	c.ch.Destroy()
}
