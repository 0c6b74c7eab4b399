package core

// The gate of a completion waiter: whether completion events reach Go's
// runtime poller at all.
//
// A completion waiter (newEpollWaiter) parks on an epoll instance of its
// own that watches the completion channel, and that instance is registered
// with the runtime's poller. While the channel is an item of it, every
// completion event goes up both levels, and when any goroutine is parked
// on any fd (the device's asynchronous-event reader always is), the
// runtime keeps a thread blocked in epoll_wait, so every event wakes that
// thread: a wake-up paid inside the post that completes the request, even
// when nobody is parked on this CQ. That is the common case of a loop
// that posts and then waits: the completion, and its event, often come
// before the wait, which then reads the event without parking (Linux 6.1's
// rxe: one extra context switch per operation, traced in
// doc/notes/performance-lab-notes.md, "Event mode: completion events and
// the poller's thread").
//
// So the channel is an item only while waits park: a park adds it
// (EPOLL_CTL_ADD, which reports an event already pending at once, so none
// is lost); after gateIdleMax events in a row were read without a park,
// the holder of the turn removes it (EPOLL_CTL_DEL; EPOLL_CTL_MOD cannot
// mute it: the kernel keeps EPOLLERR and EPOLLHUP in an item's events, and
// a wake-up without a key reaches every item). A new waiter starts without
// it. A CQ whose waits always park (completions that come after the wait
// began, as on a wire) keeps it and pays nothing more. Only the holder of
// the turn adds or removes it; the fields are its own.
type gate struct {
	fd       int  // the gated fd (the completion channel's); -1: no gate
	armed    bool // fd is an item of the waiter's epoll instance
	unparked int  // events read since the last park
	// The arming and disarming calls, made through the waiter's RawConn
	// (which keeps the epoll fd open meanwhile), prebuilt so that they
	// allocate nothing; err is the last call's error.
	armFn, disarmFn func(uintptr)
	err             error
}

// gateIdleMax is how many events in a row a gate lets be read without a
// park before it disarms.
const gateIdleMax = 4

// noGate is the gate of a waiter whose fd is not an epoll instance.
var noGate = gate{fd: -1}

// gating is whether gates remove their fd at all (SetGating). It is read
// on every completion event a waiter reads (gateEventRead), without
// synchronisation; only benchmarks and a test clear it.
var gating = true

// SetGating turns the gating of completion channels (gate.go) on, the
// default, or off (each channel is watched from its waiter's creation on,
// as before gating), for every CQ of the process: a process-global
// switch of a heuristic on the completion-wait path. Only benchmarks call
// it: conn's benchmarks measure the same binary with and without it
// (RPMA_BENCH_GATE=0). It is not synchronized: call it before any
// connection exists.
func SetGating(on bool) { gating = on }

// gateArm arms w's gate before a park and restarts the count of events
// read without one, so that the event the park itself reads cannot
// disarm the gate (park restarts it again after reading). Only the holder
// of the turn calls it.
func (w *waiter) gateArm() error {
	g := &w.gate
	g.unparked = 0
	if g.fd < 0 || g.armed {
		return nil
	}
	if err := w.rc.Control(g.armFn); err != nil {
		return err
	}
	if g.err != nil {
		return g.err
	}
	g.armed = true
	return nil
}

// gateEventRead counts an event read by the holder of the turn and
// disarms w's gate after gateIdleMax of them without a park. A failed
// disarm leaves the gate armed, which only costs the wake-ups.
func (w *waiter) gateEventRead() {
	g := &w.gate
	if g.fd < 0 || !g.armed || !gating {
		return
	}
	if g.unparked++; g.unparked < gateIdleMax {
		return
	}
	if err := w.rc.Control(g.disarmFn); err == nil && g.err == nil {
		g.armed = false
	}
}
