package bench

import (
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Tracepoint counters: how many times a kernel tracepoint fired on every
// CPU, for every process (in the test VM the benchmark makes nearly all
// the calls), read without disturbing the counted program. Open each
// tracepoint once per process and never close it: enabling and disabling
// a system-call tracepoint patches the kernel's text, and under qemu's
// TCG doing it again and again crashed the 6.12 guest (an int3 Oops in
// syscall_trace_enter).

// OpenTracepoint opens a counter of the tracepoint (a path under
// tracefs' events/, such as "raw_syscalls/sys_enter") on every CPU,
// mounting tracefs where it is not (the test VM). It returns nil where
// the kernel does not let the process count (not root, no tracefs).
func OpenTracepoint(tracepoint string) []int {
	id := tracepointID(tracepoint)
	if id < 0 {
		return nil
	}
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_TRACEPOINT,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config: uint64(id),
	}
	var fds []int
	for cpu := range runtime.NumCPU() {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil
		}
		fds = append(fds, fd)
	}
	return fds
}

// ReadTracepoint returns the sum of the counters fds (from
// OpenTracepoint), or -1 for none.
func ReadTracepoint(fds []int) int64 {
	if fds == nil {
		return -1
	}
	var (
		n int64
		b [8]byte
	)
	for _, fd := range fds {
		if k, err := unix.Read(fd, b[:]); err == nil && k == 8 {
			n += int64(binary.NativeEndian.Uint64(b[:]))
		}
	}
	return n
}

// tracepointID returns the id of a tracepoint, or -1.
func tracepointID(tracepoint string) int {
	const dir = "/sys/kernel/tracing"
	path := dir + "/events/" + tracepoint + "/id"
	b, err := os.ReadFile(path)
	if err != nil {
		if unix.Mount("nodev", dir, "tracefs", 0, "") != nil {
			return -1
		}
		if b, err = os.ReadFile(path); err != nil {
			return -1
		}
	}
	id, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return id
}
