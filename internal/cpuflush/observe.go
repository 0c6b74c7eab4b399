package cpuflush

import "sync/atomic"

// observer is called by Flush after each range it wrote back.
var observer atomic.Pointer[func([]byte)]

// Observe has f called with every range Flush writes back, after its
// fence, until Observe(nil); one observer at a time. It is for tests that
// check what was persisted and when (the power-loss test's GPSPM server
// records each range before it answers); it costs Flush one load of a
// pointer when unset.
func Observe(f func(b []byte)) {
	if f == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&f)
}

// observed reports a written-back range to the observer, if any.
func observed(b []byte) {
	if f := observer.Load(); f != nil {
		(*f)(b)
	}
}
