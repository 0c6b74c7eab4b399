//go:build linux

package rdmatest

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// AwaitReadable waits (poll(2), which reads nothing) until fd is readable,
// and fails tb if it is not within timeout: a completion channel's event
// left pending for the next wait, say.
func AwaitReadable(tb testing.TB, fd int, timeout time.Duration) {
	tb.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(timeout.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n != 1 {
			tb.Fatalf("fd %d did not become readable within %v: %d, %v", fd, timeout, n, err)
		}
		return
	}
}
