package core

import (
	"context"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// sharedChannel is the completion channel a connection's CQ and RCQ share
// (conn.Config.SharedCompChannel, librpma's rpma_conn_cfg_set_compl_channel);
// Conn.Wait waits on it. Its waiter also watches the connection's event
// channel and termFD, as a CQ's own does.
type sharedChannel struct {
	ch      *ibv.CompChannel
	w       *waiter
	cq, rcq *CQ // rcq nil when the connection has none
	ev      *connEvents
	wres    tryResult // the outcome of the parked wait's attempt (try)
}

// The sources of the shared channel's arrivals (waiter.arrived).
const (
	arrivalCQ  = 0
	arrivalRCQ = 1
)

func newSharedChannel(op string, ctx *ibv.Context, ev *connEvents, tune Tuning, thread bool) (*sharedChannel, error) {
	ch, err := ctx.CreateCompChannel()
	if err != nil {
		return nil, provider(op, err)
	}
	w, err := newChannelWaiter(ch, tune, thread, ev.ch.fd, ev.termFD)
	if err != nil {
		ch.Destroy()
		return nil, provider(op, err)
	}
	return &sharedChannel{ch: ch, w: w, ev: ev}, nil
}

// destroy wakes waiters and destroys the channel; its CQs must be gone.
func (s *sharedChannel) destroy() error {
	if s == nil {
		return nil
	}
	s.w.close()
	return provider("conn_delete", s.ch.Destroy())
}

// wake wakes the channel's waits, which return an error matching
// os.ErrClosed.
func (s *sharedChannel) wake() {
	if s != nil {
		s.w.close()
	}
}

// pending returns the CQ whose reaped completions wait in its stash, nil
// if none.
func (s *sharedChannel) pending() *CQ {
	switch {
	case s.cq.pending():
		return s.cq
	case s.rcq != nil && s.rcq.pending():
		return s.rcq
	}
	return nil
}

// fill polls both CQs into their stashes and returns one that holds
// completions, nil if neither.
func (s *sharedChannel) fill() *CQ {
	switch {
	case s.cq.fill():
		return s.cq
	case s.rcq != nil && s.rcq.fill():
		return s.rcq
	}
	return nil
}

// fillIfUnannounced is fill before a park: CQ.fillIfUnannounced for
// each CQ.
func (s *sharedChannel) fillIfUnannounced() *CQ {
	switch {
	case s.cq.fillIfUnannounced():
		return s.cq
	case s.rcq != nil && s.rcq.fillIfUnannounced():
		return s.rcq
	}
	return nil
}

// wait is Conn.Wait: a broadcast wait, like CQ.wait, that also says which
// CQ the event was for. A waiter woken by another's read of an event
// returns the CQ of that event.
func (s *sharedChannel) wait(ctx context.Context, op string) (*CQ, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := s.w
	e := w.epochNow()
	if w.tryTurn() {
		if w.fastDue() {
			q, done, err := s.tryEvent(op)
			if done {
				w.release()
				return q, err
			}
		}
		w.release()
	} else if q := s.pending(); q != nil {
		return q, nil
	}
	if q := s.fillIfUnannounced(); q != nil {
		return q, nil
	}
	res, err := w.wait(ctx, true, e, s)
	if err != nil {
		return nil, waitError(op, "connection", "a completion event", err)
	}
	if s.cq != nil && s.cq.dl != nil {
		s.cq.dl.blocked()
	}
	switch {
	case res.q != nil || res.err != nil:
		return res.q, res.err
	}
	// Another waiter read the event.
	now := w.epochNow()
	if s.rcq != nil && now[arrivalRCQ] != e[arrivalRCQ] && now[arrivalCQ] == e[arrivalCQ] {
		return s.rcq, nil
	}
	return s.cq, nil
}

// flushDue reports whether flushed completions are due on either CQ
// (endflush.go).
func (s *sharedChannel) flushDue(cause error) bool {
	return s.cq.flushDue(cause) || (s.rcq != nil && s.rcq.flushDue(cause))
}

// try and result make s the tryer of its waits (see CQ.try).
func (s *sharedChannel) try() bool {
	q, done, err := s.tryOnce("conn_wait")
	if done {
		s.wres = tryResult{q: q, err: err}
	}
	return done
}

func (s *sharedChannel) result() tryResult { return s.wres }

// quiet makes s a quieter, as CQ.quiet.
func (s *sharedChannel) quiet() bool { return s.pending() == nil }

// tryOnce reads a pending event of the channel, acknowledged and re-armed,
// and records its arrival; with none, it checks the connection's events.
// It reports the event's CQ, whether the wait is over, and with what
// error. The caller holds the turn.
func (s *sharedChannel) tryOnce(op string) (*CQ, bool, error) {
	if q, done, err := s.tryEvent(op); done {
		return q, true, err
	}
	var leftover *CQ
	done, err := s.ev.ended(func() bool { leftover = s.fill(); return leftover != nil }, s.flushDue)
	return leftover, done, err
}

// tryEvent is tryOnce without the check of the connection's end: the
// fast path of a wait, as CQ.tryEvent. The caller holds the turn.
func (s *sharedChannel) tryEvent(op string) (*CQ, bool, error) {
	if q, got, err := s.readEvent(op); got {
		return q, true, err
	}
	if q := s.pending(); q != nil {
		return q, true, nil
	}
	return nil, false, nil
}

// readEvent reads a pending event of the channel, acknowledged and
// re-armed, records its arrival and returns its CQ; it reports false when
// none is pending. The caller holds the turn.
func (s *sharedChannel) readEvent(op string) (*CQ, bool, error) {
	ref, err := s.ch.GetCQEventRearm()
	if isAgain(err) {
		return nil, false, nil
	}
	q, err := s.event(op, ref, err)
	return q, true, err
}

// event handles an event read from the channel (ref, or the failure to
// read or re-arm, err): it records its arrival and returns its CQ. The
// caller holds the turn.
func (s *sharedChannel) event(op string, ref ibv.CQRef, err error) (*CQ, error) {
	s.cq.eventRead()
	if s.rcq != nil {
		s.rcq.eventRead()
	}
	var q *CQ
	src := arrivalCQ
	switch {
	case s.cq.cq.Is(ref):
		q = s.cq
	case s.rcq != nil && s.rcq.cq.Is(ref):
		q, src = s.rcq, arrivalRCQ
	case err == nil:
		return nil, rpmaerr.New(op, rpma.CodeUnknown, 0, "event of an unknown CQ")
	}
	if err != nil {
		return q, cqEventError(op, err)
	}
	s.w.arrived(src)
	return q, nil
}

// readArgs makes s's parks read events acknowledged and re-armed: a shared
// channel's CQs are never lazy (spin.go).
func (s *sharedChannel) readArgs() (bool, int) { return true, 1 }

// tookEvent makes s an eventTaker, as CQ.tookEvent.
func (s *sharedChannel) tookEvent(ref ibv.CQRef, err error) bool {
	q, err := s.event("conn_wait", ref, err)
	s.wres = tryResult{q: q, err: err}
	return true
}
