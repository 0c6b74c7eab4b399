//go:build linux

// Package vmtest holds what the tests that boot VMs on the host share:
// a VM's output as a stream of lines with bounded waits, and a boot that
// retries a VM whose kernel crashed before its command started.
package vmtest

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/vm"
)

// Lines turns a VM's stdout into a channel of lines, each also logged.
type Lines struct {
	W       *io.PipeWriter // what the VM writes to
	C       chan string    // the lines, closed when W is
	Pending []string       // lines read ahead (Drain), not consumed yet
}

// NewLines returns Lines whose lines are logged with name.
func NewLines(t *testing.T, name string) *Lines {
	r, w := io.Pipe()
	l := &Lines{W: w, C: make(chan string, 4096)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			t.Logf("%s: %s", name, sc.Text())
			l.C <- sc.Text()
		}
		close(l.C)
	}()
	return l
}

// LogWriter sends a VM's stderr to the test log, line by line.
func LogWriter(t *testing.T, name string) io.Writer {
	return NewLines(t, name).W
}

// Next returns the next line with one of the prefixes, or fails at d or
// when the output ends.
func (l *Lines) Next(t *testing.T, d time.Duration, prefixes ...string) string {
	t.Helper()
	s, ok := l.TryNext(t, d, prefixes...)
	require.True(t, ok, "output ended while waiting for %v", prefixes)
	return s
}

// TryNext is Next, reporting false instead of failing when the output
// ended first.
func (l *Lines) TryNext(t *testing.T, d time.Duration, prefixes ...string) (string, bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		var s string
		ok := true
		if len(l.Pending) > 0 {
			s, l.Pending = l.Pending[0], l.Pending[1:]
		} else {
			select {
			case s, ok = <-l.C:
			case <-timer.C:
				t.Fatalf("no %v within %v", prefixes, d)
			}
		}
		if !ok {
			return "", false
		}
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				return s, true
			}
		}
	}
}

// Boot starts a VM whose stdout goes to a fresh Lines named name and
// returns it with its first line that has one of the prefixes (within
// d). A VM whose kernel crashed while booting (rare under TCG; the
// command never ran) is booted again, up to vm.BootAttempts times in all,
// as rxevm does.
func Boot(t *testing.T, p *vm.Prepared, name string, d time.Duration, node func(stdout io.Writer) vm.Node,
	prefixes ...string) (*vm.Machine, *Lines, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out := NewLines(t, name)
		m, err := p.Start(node(out.W))
		require.NoError(t, err)
		go func() {
			<-m.Done() // the VM exited and its output is drained
			out.W.Close()
		}()
		if s, ok := out.TryNext(t, d, prefixes...); ok {
			return m, out, s
		}
		<-m.Done()
		crashed := m.DiedBeforeCommand()
		m.Close()
		require.True(t, crashed && attempt < vm.BootAttempts, "%s: output ended while waiting for %v", name, prefixes)
		t.Logf("%s: the VM crashed while booting; booting it again (attempt %d of %d)", name, attempt+1, vm.BootAttempts)
	}
}
