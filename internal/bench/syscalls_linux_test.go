package bench_test

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/gorpma/rpma/internal/bench"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// BenchmarkSyscallsC reports the system calls rpma_lat makes per
// operation, the figure conn's BenchmarkOps reports as syscalls/op with
// RPMA_BENCH_SYSCALLS=1: every CPU's raw_syscalls:sys_enter over a run of
// short and of long runs of one operation (-o), whose difference over
// the difference in operations leaves set-up and teardown out. b.N is
// not used: run it with -benchtime=1x, in the VM:
//
//	go test -exec "bin/rxevm --" -run '^$' -bench SyscallsC -benchtime=1x ./internal/bench/
func BenchmarkSyscallsC(b *testing.B) {
	ip := rdmatest.IP(b)
	fds := bench.OpenTracepoint("raw_syscalls/sys_enter")
	if fds == nil {
		b.Skip("the kernel does not let this process count system calls (root and tracefs needed)")
	}
	bin := buildC(b, "rpma_lat")
	const short, long = 500, 2500
	for _, op := range []string{"Write64", "Read64", "Write64Wait"} {
		b.Run(op, func(b *testing.B) {
			count := func(n int) int64 {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				before := bench.ReadTracepoint(fds)
				cmd := exec.CommandContext(ctx, bin, "-n", strconv.Itoa(n), "-w", "0", "-p", "7298", "-o", op, ip)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("rpma_lat -o %s: %v\n%s", op, err, out)
				}
				return bench.ReadTracepoint(fds) - before
			}
			// Each run twice, the least of each: another process's calls
			// only add.
			s := min(count(short), count(short))
			l := min(count(long), count(long))
			b.ReportMetric(float64(l-s)/float64(long-short), "syscalls/op")
		})
	}
}
