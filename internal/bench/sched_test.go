package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A made-up trace in ftrace's text format: the program (prog, threads 10
// and 11) posts three times on vCPU 0, the third time from thread 11 (a
// hop); rxe's worker (pid 50) is woken twice, once onto vCPU 0 while the
// poller runs there and once onto the idle vCPU 1.
const schedTrace = `# tracer: nop
            prog-10      [000] .....     1.000000: sched_switch: prev_comm=x prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=prog next_pid=10 next_prio=120
          <idle>-0       [001] .....     1.000000: sched_switch: prev_comm=x prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
            prog-10      [000] .....     1.000100: sys_enter: NR 1 (3, 7fff74998d60, 20, 0, 7, 0)
            prog-10      [000] .....     1.000110: sched_wakeup: comm=kworker/u8:2 pid=50 prio=120 target_cpu=000
            prog-10      [000] .....     1.000200: sched_switch: prev_comm=prog prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=kworker/u8:2 next_pid=50 next_prio=120
    kworker/u8:2-50      [000] .....     1.000210: workqueue_execute_start: work struct 00000000ce7a456a: function do_work [rdma_rxe]
    kworker/u8:2-50      [000] .....     1.000300: sched_switch: prev_comm=kworker/u8:2 prev_pid=50 prev_prio=120 prev_state=S ==> next_comm=prog next_pid=10 next_prio=120
            prog-10      [000] .....     1.000400: sys_enter: NR 1 (3, 7fff74998d60, 20, 0, 7, 0)
            prog-10      [000] .....     1.000410: sched_wakeup: comm=kworker/u8:2 pid=50 prio=120 target_cpu=001
          <idle>-0       [001] .....     1.000450: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/u8:2 next_pid=50 next_prio=120
            prog-10      [000] .....     1.000500: sys_enter: NR 1 (3, 7fff74998d60, 18, 0, 7, 0)
            prog-10      [000] .....     1.000600: sys_enter: NR 202 (c000080148, 80, 0, 0, 0, 0)
            prog-10      [000] .....     1.000900: sched_switch: prev_comm=prog prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=prog next_pid=11 next_prio=120
            prog-11      [000] .....     1.001000: sys_enter: NR 1 (3, 7fff74998d60, 20, 0, 7, 0)
`

func TestAnalyzeSched(t *testing.T) {
	evs, err := ParseTrace(strings.NewReader(schedTrace))
	require.NoError(t, err)
	require.Len(t, evs, 14)
	s, err := AnalyzeSched(evs, "prog")
	require.NoError(t, err)
	require.Equal(t, 3, s.Posts, "the 24-byte write is not a post")
	require.Equal(t, 2, s.Threads)
	require.Equal(t, 1, s.Hops)
	require.Equal(t, map[int]int{1: 4, 202: 1}, s.Syscalls)
	require.Equal(t, 2, s.Wakeups)
	require.Equal(t, map[string]int{RolePoller: 1, RoleIdle: 1}, s.WakeTarget)
	// The first wake-up ran 90 µs later, the second 40 µs.
	require.InDelta(t, 40, s.WakeToRunP50Us, 0.01)
	require.InDelta(t, 90, s.WakeToRunP90Us, 0.01)
	// From 1.0001 to 1.001 (0.9 ms on each of 2 vCPUs): vCPU 0 ran the
	// poller 0.1 + 0.6 ms (thread 10) + 0.1 ms (thread 11, which posts
	// next) and rxe 0.1 ms; vCPU 1 was idle 0.35 ms, then rxe.
	require.InDelta(t, 0.8/1.8, s.Share[RolePoller], 1e-6)
	require.InDelta(t, 0.65/1.8, s.Share[RoleRXE], 1e-6)
	require.InDelta(t, 0.35/1.8, s.Share[RoleIdle], 1e-6)

	_, err = AnalyzeSched(evs, "nobody")
	require.Error(t, err)

	var b bytes.Buffer
	WriteSched(&b, []string{"prog"}, []SchedStats{s})
	require.Contains(t, b.String(), "| prog | 3 | 2 | 1 | 0 / 1 / 0 | 44% / 0% / 36% / 19% | 2 | 1 / 0 / 0 / 1 | 40 / 90 |")
}

func TestWriteSchedTiming(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("c.txt", "# round 1\nBenchmarkOps/Write64 1000 100 ns/op 80 p50-ns 900 p99-ns\n# round 2\nBenchmarkOps/Write64 1000 200 ns/op 100 p50-ns 900 p99-ns\n")
	write("go.txt", "# round 1\nBenchmarkOps/Write64-2 1000 300 ns/op\nBenchmarkOpsStamped/Write64-2 1000 310 ns/op 160 p50-ns 999 p99-ns\n# round 2\nBenchmarkOps/Write64-2 1000 400 ns/op\nBenchmarkOpsStamped/Write64-2 1000 410 ns/op 300 p50-ns 999 p99-ns\n")
	write("gopin.txt", "# round 2\nBenchmarkOps/Write64-2 1000 220 ns/op\nBenchmarkOpsStamped/Write64-2 1000 230 ns/op 110 p50-ns 999 p99-ns\n")
	var b bytes.Buffer
	require.NoError(t, WriteSchedTiming(&b, dir))
	require.Contains(t, b.String(), "| librpma | 150 | 90 |")
	// Go/C per round: 3 and 2 (ns/op), 2 and 3 (p50).
	require.Contains(t, b.String(), "| Go | 350 | 230 | 2.50 | 2.00-3.00 | 2.50 | 2.00-3.00 | 2 |")
	require.Contains(t, b.String(), "| 220 | 110 | 1.10 | 1.10-1.10 | 1.10 | 1.10-1.10 | 1 |")
	require.NotContains(t, b.String(), "RPMA_BENCH_YIELD", "no gonoyield.txt: no row")

	write("gonoyield.txt", "# round 1\nBenchmarkOps/Write64-2 1000 500 ns/op\nBenchmarkOpsStamped/Write64-2 1000 510 ns/op 240 p50-ns 999 p99-ns\n")
	b.Reset()
	require.NoError(t, WriteSchedTiming(&b, dir))
	require.Contains(t, b.String(), "| Go without its yield (RPMA_BENCH_YIELD=0) | 500 | 240 | 5.00 | 5.00-5.00 | 3.00 | 3.00-3.00 | 1 |")
}
