package core

import (
	"fmt"
	"syscall"
	"time"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Liveness: a connection with a PeerTimeout D reports itself lost when
// the other side has not answered for D. librpma has no such thing (and
// on rxe a retry count of 7 retries for ever: operations to a vanished
// host never fail).
//
// Every D/livenessTicks a timer (no goroutine of its own) takes the data
// lock and polls the CQ into the stash, so that completions the caller
// has not polled yet count. Progress is the send queue's retired count
// moving; the hot path records nothing (no clock read per operation).
//   - With requests outstanding and no progress for livenessTicks ticks
//     in a row, the connection is lost (between D and 1.25 × D after the
//     last completion; 1.5 × D after the last answered probe when idle): its QP goes to the error state (outstanding requests
//     complete with flush errors), posts fail with rpma.ErrConnBroken,
//     waits with a *rpma.ConnEventError (LOST), NextEvent returns LOST,
//     and every cause matches rpma.ErrPeerTimeout.
//   - At a tick with nothing outstanding, the library posts a probe:
//     a signaled zero-length RDMA write, with a send-queue slot and a CQ
//     entry of its own, whose completion it absorbs (the caller never
//     sees it, even failed). An idle connection is thus answered for
//     too. A probe that fails (its retries exhausted, or flushed: rxe
//     flushes the QPs of a link that goes down) ends the connection
//     the same way at the next tick, its cause the probe's completion
//     error (a *rpma.WCError).
//
// A peer whose receive queue is empty (a send waiting on receiver-not-
// ready) makes no progress either: it counts as dead after D, like one
// that vanished (the completion is the only sign of the other side that
// verbs give). D must also exceed the longest single operation.
const livenessTicks = 4

// liveness is a connection's, under its data lock.
type liveness struct {
	d           time.Duration
	timer       *time.Timer
	lastRetired uint64 // the send queue's retired count at the last tick
	stalled     int    // ticks in a row with requests outstanding and no progress
	idle        int    // ticks in a row with nothing outstanding
}

// probeError is the cause of a connection lost because its probe failed
// (the other side did not answer it in the transport's retries, or the
// QP went to the error state: a local link down flushes it, for one).
type probeError struct{ err error }

func (e *probeError) Error() string { return "the liveness probe failed: " + e.err.Error() }

func (e *probeError) Unwrap() error { return e.err }

// peerTimeoutError is the cause of a connection lost for its PeerTimeout.
type peerTimeoutError struct{ d time.Duration }

func (e *peerTimeoutError) Error() string {
	return fmt.Sprintf("the other side did not answer for %v (conn.Config.PeerTimeout)", e.d)
}

func (e *peerTimeoutError) Unwrap() error { return rpma.ErrPeerTimeout }

// startLiveness starts c's timer when c has a PeerTimeout.
func (c *Conn) startLiveness(d time.Duration) {
	if d <= 0 {
		return
	}
	c.live.d = d
	c.live.timer = time.AfterFunc(d/livenessTicks, c.livenessTick)
}

// stopLiveness stops the timer (Close).
func (c *Conn) stopLiveness() {
	if t := c.live.timer; t != nil {
		t.Stop()
	}
}

// livenessTick is one tick of the timer.
func (c *Conn) livenessTick() {
	// Inside the connection's life: Close waits for a tick in progress,
	// and a tick after Close began does nothing.
	if !c.enter() {
		return // no more ticks
	}
	defer c.exit()
	// Read the connection's events (into NextEvent's queue): ESTABLISHED
	// starts the watch even if nobody reads events, CLOSED ends it.
	c.ev.terminal()
	d := c.dl
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return // no more ticks
	}
	if c.state.err() != nil {
		// Broken. If by a failed probe (polled by GetWC, which absorbed
		// it), nobody was told: a connection with nothing outstanding
		// learns it only from the LOST event.
		perr := c.q.sq.probeErr
		d.mu.Unlock()
		if perr != nil {
			c.lose(perr)
		}
		return // no more ticks
	}
	lv := &c.live
	if !c.ev.isEstablished() {
		d.mu.Unlock()
		lv.timer.Reset(lv.d / livenessTicks)
		return
	}
	sq, cq := c.q.sq, c.q.cq
	cq.pollIntoStash("peer_probe")
	if perr := sq.probeErr; perr != nil {
		d.mu.Unlock()
		c.lose(perr)
		return
	}
	outstanding := sq.posted != sq.retired
	switch {
	case sq.retired != lv.lastRetired:
		lv.lastRetired = sq.retired
		lv.stalled, lv.idle = 0, 0
	case outstanding:
		lv.stalled++
	default:
		lv.idle++
	}
	lost := lv.stalled >= livenessTicks
	var perr error
	if !lost && !outstanding && lv.idle >= 1 {
		perr = c.probe()
		lv.idle = 0
	}
	d.mu.Unlock()
	if perr != nil {
		c.lose(perr)
		return
	}
	if lost {
		c.lose(&peerTimeoutError{d: lv.d})
		return
	}
	lv.timer.Reset(lv.d / livenessTicks)
}

// probe posts the liveness probe (data lock held) through the post
// protocol (post.go): a signaled zero-length RDMA write, in the probe's
// own slot (workQueue.reserveProbe). A post the provider refuses for lack
// of room is tried again at the next tick; any other failure is
// returned, and the connection is then lost with it as the cause.
func (c *Conn) probe() error {
	sq, cq := c.q.sq, c.q.cq
	p, ok := sq.reserveProbe()
	if !ok {
		return nil // one is outstanding (the tick posts none then)
	}
	sl, f := p.slot(0, true)
	*sl = wrSlot{probe: true}
	errno, reaped := c.q.qp.PostSend(p.wrID(0), ibv.OpRDMAWrite, f, 0, 0, 0, 0, 0, 0, cq.reap())
	if errno != 0 {
		p.rollback(0, 1, p.saved)
	} else {
		c.dl.stats.probes++
	}
	cq.reaped(reaped)
	switch errno {
	case 0, syscall.ENOMEM, syscall.ENOSPC:
		return nil // a full queue in the provider's view: the next tick tries again
	}
	// The connection cannot be watched any more: report it lost, with
	// the reason, rather than go on without a probe.
	return &probeError{err: rpmaerr.Provider("ibv_post_send", errno)}
}

// lose ends c on the library's own account: its QP goes to the error
// state (outstanding requests flush), posts fail with cause, waits end
// with a ConnEventError (LOST) whose cause is cause.
func (c *Conn) lose(cause error) {
	c.state.breakWith(cause)
	d := c.dl
	d.mu.Lock()
	if !d.closed {
		if err := c.q.qp.ToError(); err != nil {
			rpma.Logf(rpma.LogWarning, "%v; moving the QP to the error state: %v", cause, err)
		}
	}
	d.mu.Unlock()
	rpma.Logf(rpma.LogError, "connection lost: %v", cause)
	c.ev.lose(cause)
}
