package core

import (
	"context"
	"fmt"
	"sync"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// A device's asynchronous events (ibv_get_async_event) say when a QP or a
// CQ has failed, or the port changed state. librpma never reads them;
// this module does, through the runtime poller, for as long as a peer of
// the device is open, and acknowledges each one as soon as it is read:
// ibv_destroy_qp, _cq and _srq wait until every event read for their
// object is acknowledged, so a late acknowledgement would hang a Close
// inside C.
//
// What each event does:
//   - QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR break that QP's connection;
//   - CQ_ERR (an overrun) breaks the connection of that CQ;
//   - DEVICE_FATAL breaks every connection of the device;
//   - COMM_EST is passed to rdma_cm (rdma_notify), which then completes
//     the connection;
//   - PORT_ERR, PORT_ACTIVE, GID_CHANGE and the others are logged: an RC
//     connection survives a port that goes down and comes back (its
//     requests retry meanwhile).
//
// Breaking a connection is what a failed completion does (posts return
// rpma.ErrConnBroken, naming the event), plus what the provider does not
// do for these events: the connection's waits end with a
// *rpma.ConnEventError (ConnLost, its Cause naming the event), and
// NextEvent returns rpma.ConnLost.

// asyncWatch reads the asynchronous events of one device context.
type asyncWatch struct {
	ctx  *ibv.Context
	w    *waiter
	refs int // open peers of the device
}

// owner is what an asynchronous event about a QP or a CQ reaches.
type owner struct {
	dev   uintptr // the device context's key
	state *qpState
	ev    *connEvents
	id    *ibv.CMID
}

var asyncEvents = struct {
	sync.Mutex
	watches map[uintptr]*asyncWatch // by device context
	qps     map[uintptr]*owner      // by QP
	cqs     map[uintptr]*owner      // by CQ (a connection's own CQs)
}{
	watches: map[uintptr]*asyncWatch{},
	qps:     map[uintptr]*owner{},
	cqs:     map[uintptr]*owner{},
}

// watchDevice starts reading ctx's events, unless a peer of it already
// did. A device whose events cannot be watched still works: it is logged.
func watchDevice(ctx *ibv.Context) {
	a := &asyncEvents
	a.Lock()
	defer a.Unlock()
	key := ctx.Key()
	if aw := a.watches[key]; aw != nil {
		aw.refs++
		return
	}
	w, err := newWaiter(ctx.AsyncFD(), "ibv_async")
	if err != nil {
		rpma.Logf(rpma.LogWarning, "asynchronous events of %s will not be read: %v", ctx.Name(), err)
		w = nil
	}
	aw := &asyncWatch{ctx: ctx, w: w, refs: 1}
	a.watches[key] = aw
	if w != nil {
		go aw.run()
	}
}

// unwatchDevice stops reading ctx's events when its last peer closes.
func unwatchDevice(ctx *ibv.Context) {
	if ctx == nil {
		return
	}
	a := &asyncEvents
	a.Lock()
	defer a.Unlock()
	key := ctx.Key()
	aw := a.watches[key]
	if aw == nil {
		return
	}
	if aw.refs--; aw.refs == 0 {
		delete(a.watches, key)
		aw.w.close()
	}
}

// run reads and dispatches events until the waiter is closed.
func (aw *asyncWatch) run() {
	for {
		var (
			e    ibv.AsyncEvent
			rerr error
		)
		_, err := aw.w.wait(context.Background(), false, epoch{}, tryFunc(func() bool {
			e, rerr = aw.ctx.GetAsyncEvent()
			return rerr == nil || !isAgain(rerr)
		}))
		if err != nil {
			return // closed
		}
		if rerr != nil {
			rpma.Logf(rpma.LogError, "reading asynchronous events of %s: %v; no more will be read", aw.ctx.Name(), rerr)
			return
		}
		dispatchAsync(aw.ctx.Key(), e)
	}
}

// asyncEventError is the cause a connection broken by an asynchronous
// event carries.
type asyncEventError struct{ ev ibv.AsyncEvent }

func (e *asyncEventError) Error() string {
	return fmt.Sprintf("asynchronous event %s", e.ev.Type)
}

// dispatchAsync applies event e of device dev (see the comment at the top).
func dispatchAsync(dev uintptr, e ibv.AsyncEvent) {
	a := &asyncEvents
	var victims []*owner
	var notify *ibv.CMID
	a.Lock()
	switch e.Type {
	case ibv.EventQPFatal, ibv.EventQPReqErr, ibv.EventQPAccessErr:
		if o := a.qps[e.Object]; o != nil {
			victims = append(victims, o)
		}
	case ibv.EventCQErr:
		if o := a.cqs[e.Object]; o != nil {
			victims = append(victims, o)
		}
	case ibv.EventDeviceFatal:
		for _, o := range a.qps {
			if o.dev == dev {
				victims = append(victims, o)
			}
		}
	case ibv.EventCommEst:
		if o := a.qps[e.Object]; o != nil {
			notify = o.id
		}
	}
	a.Unlock()

	switch {
	case victims != nil:
		rpma.Logf(rpma.LogError, "%s: breaking %d connection(s)", e.Type, len(victims))
		cause := &asyncEventError{ev: e}
		for _, o := range victims {
			o.state.breakWith(cause)
			o.ev.lose(cause)
		}
	case notify != nil:
		if err := notify.NotifyEstablished(); err != nil {
			rpma.Logf(rpma.LogWarning, "%s: %v", e.Type, err)
		}
	case e.Port != 0:
		rpma.Logf(rpma.LogNotice, "%s on port %d", e.Type, e.Port)
	default:
		rpma.Logf(rpma.LogNotice, "%s", e.Type)
	}
}

// registerOwner makes the asynchronous events of q's QP and CQs reach its
// connection.
func registerOwner(dev *ibv.Context, q *queues, ev *connEvents, id *ibv.CMID) *owner {
	o := &owner{dev: dev.Key(), state: q.state, ev: ev, id: id}
	a := &asyncEvents
	a.Lock()
	defer a.Unlock()
	a.qps[q.qp.Key()] = o
	for _, c := range []*CQ{q.cq, q.rcq} {
		if c != nil {
			a.cqs[c.cq.Key()] = o
		}
	}
	return o
}

// unregister stops the events of q's objects from reaching their
// connection; it runs before they are destroyed (their keys could be
// reused).
func (q *queues) unregister() {
	if q.owner == nil {
		return
	}
	a := &asyncEvents
	a.Lock()
	defer a.Unlock()
	delete(a.qps, q.qp.Key())
	for _, c := range []*CQ{q.cq, q.rcq} {
		if c != nil {
			delete(a.cqs, c.cq.Key())
		}
	}
	q.owner = nil
}
