package core

import (
	"context"
	"errors"
	"os"

	"github.com/gorpma/rpma/internal/ibv"
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

// next waits for the next event, copied and acknowledged. Errors: ctx.Err()
// when ctx ends, errClosed(op, what) when the channel is woken by Close, an
// rpma provider error when rdma_get_cm_event fails.
func (c *cmChannel) next(ctx context.Context, op, what string) (ibv.CMEvent, error) {
	var (
		ev     ibv.CMEvent
		evErr  error
		gotOne bool
	)
	err := c.w.wait(ctx, func() bool {
		e, err := c.ch.GetEvent()
		if err != nil && isAgain(err) {
			return false
		}
		ev, evErr, gotOne = e, err, true
		return true
	})
	switch {
	case gotOne && evErr != nil:
		// rdma_get_cm_event failed, or the event was read but its ack
		// failed: RPMA_E_PROVIDER, as in librpma.
		return ev, provider(op, evErr)
	case gotOne:
		return ev, nil
	case errors.Is(err, os.ErrClosed):
		return ev, errClosed(op, what)
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return ev, err
	default:
		return ev, rpma.NewError(op, rpma.CodeProvider, 0, "waiting for an rdma_cm event: %v", err)
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
