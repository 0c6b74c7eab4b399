// Package leak tracks the module's C-backed objects in tests, so that a test
// binary can report every object that was created and never closed.
//
// Every constructor of a C-backed object calls [Track] and every Close
// calls [Handle.Release]. Tracking is off (and costs one atomic load per
// call) until [Enable] is called; [Main] enables it, runs the tests and
// fails the binary if anything is still tracked at the end, printing the
// stack that created each object.
//
// Wire it into a package's tests with
//
//	func TestMain(m *testing.M) { leak.Main(m) }
package leak

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// ExitCode is the exit status of a test binary that passed but leaked.
const ExitCode = 99

var (
	enabled atomic.Bool
	mu      sync.Mutex
	live    = map[*Handle]struct{}{}
)

// Handle is the tracking record of one object. A nil Handle (returned
// while tracking is off) is valid: Release on it does nothing.
type Handle struct {
	kind string
	pcs  []uintptr
}

// Enable turns tracking on for objects created from now on.
func Enable() { enabled.Store(true) }

// Track records the creation of an object of the given kind (for example
// "conn.Conn") with the caller's stack. It returns nil while tracking is
// off.
func Track(kind string) *Handle {
	if !enabled.Load() {
		return nil
	}
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	h := &Handle{kind: kind, pcs: pcs[:n]}
	mu.Lock()
	live[h] = struct{}{}
	mu.Unlock()
	return h
}

// Release records that the object was closed. It is a no-op on nil and on
// a second call.
func (h *Handle) Release() {
	if h == nil {
		return
	}
	mu.Lock()
	delete(live, h)
	mu.Unlock()
}

// Live returns a description of every object still tracked, each with the
// stack that created it, sorted; empty when nothing leaked.
func Live() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(live))
	for h := range live {
		var b strings.Builder
		fmt.Fprintf(&b, "%s created at:\n", h.kind)
		frames := runtime.CallersFrames(h.pcs)
		for {
			f, more := frames.Next()
			if f.Function != "" {
				fmt.Fprintf(&b, "\t%s\n\t\t%s:%d\n", f.Function, f.File, f.Line)
			}
			if !more {
				break
			}
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return out
}

// Count returns how many objects are still tracked.
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return len(live)
}

// Report writes every leaked object to w and returns how many there were.
func Report(w io.Writer) int {
	l := Live()
	for _, s := range l {
		fmt.Fprintf(w, "leak: %s", s)
	}
	if len(l) > 0 {
		fmt.Fprintf(w, "leak: %d object(s) never closed\n", len(l))
	}
	return len(l)
}

// M is the part of *testing.M that Main needs.
type M interface{ Run() int }

// Main enables tracking, runs the tests and exits. If the tests passed but
// objects are still tracked, it reports them on stderr and exits with
// [ExitCode].
func Main(m M) {
	os.Exit(run(m, os.Stderr))
}

func run(m M, w io.Writer) int {
	Enable()
	code := m.Run()
	if n := Report(w); n > 0 && code == 0 {
		code = ExitCode
	}
	return code
}
