package core

import _ "unsafe" // for go:linkname

// goyield is the runtime's runtime.goyield: it puts the calling goroutine
// at the tail of its P's own run queue and enters the scheduler, which
// runs whatever else that P has and then the goroutine again, on the same
// thread. Like runtime.Gosched it starts a new time slice (the scheduler's
// execute counts a tick), so the runtime's monitor, sysmon, does not
// preempt the goroutine for the next 10 ms; unlike Gosched it does not put
// the goroutine on the global run queue and does not wake an idle P's
// thread to take it (Gosched's wakep: a futex wake-up, and a thread that
// spins, finds nothing or takes the goroutine to another CPU, and sleeps
// again). Other Ps still steal from the local queue when they run dry, so
// nothing else waits longer than after a Gosched.
//
// The runtime exports goyield to go:linkname on purpose (proc.go: "Do not
// remove or change the type signature", go.dev/issue/67401; gVisor's
// scheduler uses it the same way), so the Go 1.23+ linker accepts this
// reference. Should a future runtime drop it, the build fails at link
// time, not at run time.
//
//go:linkname goyield runtime.goyield
func goyield()
