//go:build linux && cgo && !vmhost

package main

// Not in the vmhost build (!vmhost above): the vmhost tier runs ./cmd/...
// on the host, where these would skip for lack of RDMA, and a skip fails
// that tier. They run in the VM tiers; TestTwoNodes is the vmhost tier's.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/rpma"
)

// runBound bounds one in-process client run in the VM (TCG is 10-50x
// slower than hardware).
const runBound = 60 * time.Second

// server is an rpmaperf server in a process of its own (the test binary
// run as rpmaperf), so that a test can kill it.
type serverProc struct {
	cmd    *exec.Cmd
	port   string
	stderr *bytes.Buffer
	exited chan error
}

// startServer starts a server on ip, at a free port, and waits until it
// listens. It is killed when the test ends, if still running.
func startServer(t *testing.T, ip string, args ...string) *serverProc {
	t.Helper()
	s := &serverProc{stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	s.cmd = rpmaperfCmd(append([]string{"-server", "-addr", ip, "-port", "0"}, args...)...)
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, stdout)
		s.exited <- s.cmd.Wait()
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			t.Error("the server did not exit")
		}
	})
	select {
	case line := <-lines:
		prefix := "rpmaperf: server listening at " + ip + " port "
		require.True(t, strings.HasPrefix(line, prefix), "server said %q; stderr: %s", line, s.stderr)
		s.port = strings.TrimSpace(strings.TrimPrefix(line, prefix))
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not listen in 30 s; stderr: %s", s.stderr)
	}
	return s
}

// wait waits (at most bound) for the server to exit by itself.
func (s *serverProc) wait(t *testing.T, bound time.Duration) error {
	t.Helper()
	select {
	case err := <-s.exited:
		s.exited <- err // for the cleanup
		return err
	case <-time.After(bound):
		t.Fatalf("the server did not exit in %v; stderr: %s", bound, s.stderr)
		return nil
	}
}

// client runs rpmaperf's client in this process, bounded.
func client(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type out struct {
		stdout, stderr string
		code           int
	}
	done := make(chan out, 1)
	go func() {
		var o, e bytes.Buffer
		code := run(args, &o, &e)
		done <- out{o.String(), e.String(), code}
	}()
	select {
	case r := <-done:
		return r.stdout, r.stderr, r.code
	case <-time.After(runBound):
		t.Fatalf("rpmaperf %s did not end in %v", strings.Join(args, " "), runBound)
		return "", "", -1
	}
}

// parseResults parses -json output and checks every figure is sane.
func parseResults(t *testing.T, out string) []result {
	t.Helper()
	var rs []result
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r result
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		rs = append(rs, r)
		require.Positive(t, r.Iters, line)
		require.Positive(t, r.MinUS, line)
		require.LessOrEqual(t, r.MinUS, r.P50US, line)
		require.LessOrEqual(t, r.P50US, r.P99US, line)
		require.LessOrEqual(t, r.P99US, r.P999US, line)
		require.LessOrEqual(t, r.P999US, r.MaxUS, line)
		require.Equal(t, int64(r.Iters)*int64(r.Size), r.Bytes, line)
		require.Positive(t, r.MBPerS, line)
		require.Positive(t, r.Mops, line)
		require.Less(t, r.MaxUS, r.Seconds*1e6+1, "no operation outlasts its run: %s", line)
	}
	return rs
}

// TestIntegrationOps runs every operation in both modes against one
// server, with -check, and then with goroutines, depth and connections.
func TestIntegrationOps(t *testing.T) {
	ip := rdmatest.IP(t)
	srv := startServer(t, ip, "-forever")
	base := []string{"-addr", ip, "-port", srv.port, "-timeout", "10s"}

	for _, mode := range []string{"busy", "event"} {
		t.Run(mode, func(t *testing.T) {
			// Both sizes busy-polled; event mode, slower under TCG, at one.
			sizes := []int{64, 4096}
			if mode == "event" {
				sizes = []int{64}
			}
			stdout, stderr, code := client(t, append(base, "-mode", mode, "-op", "all", "-size", sizeList(sizes),
				"-iters", "100", "-json", "-check")...)
			require.Equal(t, 0, code, stderr)
			rs := parseResults(t, stdout)
			var got []string
			for _, r := range rs {
				got = append(got, r.Op)
				require.Equal(t, mode, r.Mode)
				require.Equal(t, 100, r.Iters)
				if opInfo[opCAS].name == r.Op || opInfo[opFAA].name == r.Op || opInfo[opAtomicWrite].name == r.Op {
					require.Equal(t, atomicSize, r.Size)
				}
			}
			var want []string
			for _, o := range allOps() {
				for range o.sizesFor(sizes) {
					want = append(want, o.String())
				}
			}
			require.Equal(t, want, got)
		})
	}
	t.Run("goroutines", func(t *testing.T) {
		stdout, stderr, code := client(t, append(base, "-mode", "event", "-goroutines", "4", "-depth", "2", "-conns", "2",
			"-op", "write,read,write-flush-persistent,send,cas,faa,atomic-write", "-size", "256", "-iters", "50", "-json", "-check")...)
		require.Equal(t, 0, code, stderr)
		for _, r := range parseResults(t, stdout) {
			require.Equal(t, 50*4*2, r.Iters, "iters per goroutine and connection")
			require.Equal(t, 4, r.Goroutines)
			require.Equal(t, 2, r.Conns)
		}
	})
	t.Run("busy-depth", func(t *testing.T) {
		stdout, stderr, code := client(t, append(base, "-mode", "busy", "-depth", "4", "-conns", "2",
			"-op", "write,send,faa,cas,flush-visibility", "-size", "1k", "-iters", "100", "-json", "-check")...)
		require.Equal(t, 0, code, stderr)
		for _, r := range parseResults(t, stdout) {
			require.Equal(t, 100*2, r.Iters)
			require.Equal(t, 4, r.Depth)
		}
	})
	t.Run("stats", func(t *testing.T) {
		stdout, stderr, code := client(t, append(base, "-op", "write,read", "-iters", "40", "-json", "-stats")...)
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		require.Len(t, lines, 3, stdout)
		parseResults(t, strings.Join(lines[:2], "\n"))
		js, ok := strings.CutPrefix(lines[2], "stats conn=0 ")
		require.True(t, ok, lines[2])
		var st rpma.ConnStats
		require.NoError(t, json.Unmarshal([]byte(js), &st))
		require.EqualValues(t, 40, st.Writes, "the run's writes, counted")
		require.EqualValues(t, 40, st.Reads)
		require.EqualValues(t, 40*64, st.BytesWritten)
		require.Zero(t, st.CQ.Failed)
	})
	t.Run("duration", func(t *testing.T) {
		stdout, stderr, code := client(t, append(base, "-op", "read", "-duration", "300ms", "-json")...)
		require.Equal(t, 0, code, stderr)
		r := parseResults(t, stdout)[0]
		require.InDelta(t, 0.3, r.Seconds, 0.25)
	})
	t.Run("table", func(t *testing.T) {
		stdout, stderr, code := client(t, append(base, "-op", "write,read,flush-persistent,atomic-write",
			"-size", "64,4096", "-iters", "100")...)
		require.Equal(t, 0, code, stderr)
		t.Logf("rpmaperf table on kernel %s:\n%s", rdmatest.Kernel(), stdout)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		require.Len(t, lines, 4+7, stdout)
		require.Contains(t, lines[3], "t_typical[usec]")
		require.Equal(t, "write", strings.Fields(lines[4])[0])
		require.Equal(t, "6400", strings.Fields(lines[4])[10], "100 × 64 bytes moved")
	})

	// The forever server ends cleanly on SIGINT.
	require.NoError(t, srv.cmd.Process.Signal(os.Interrupt))
	require.NoError(t, srv.wait(t, 15*time.Second), srv.stderr.String())
}

// TestIntegrationServerExitsAfterClient: without -forever the server exits
// 0 once its client has disconnected; a server that declares no direct
// write to PMem makes flush-persistent fail clearly.
func TestIntegrationServerExitsAfterClient(t *testing.T) {
	ip := rdmatest.IP(t)
	srv := startServer(t, ip)
	_, stderr, code := client(t, "-addr", ip, "-port", srv.port, "-op", "write", "-iters", "10", "-conns", "2", "-json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, srv.wait(t, 15*time.Second), srv.stderr.String())

	srv = startServer(t, ip, "-direct-pmem=false")
	_, stderr, code = client(t, "-addr", ip, "-port", srv.port, "-op", "flush-persistent", "-iters", "10")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "flush-persistent, 64 bytes: conn.Conn.Flush")
	require.Contains(t, stderr, "Not supported")
	require.Contains(t, stderr, "-direct-pmem")
}

// TestIntegrationServerVanishes: a server killed in the middle of a run
// makes the client exit non-zero within about its -timeout.
func TestIntegrationServerVanishes(t *testing.T) {
	ip := rdmatest.IP(t)
	for _, mode := range []string{"busy", "event"} {
		t.Run(mode, func(t *testing.T) {
			srv := startServer(t, ip)
			type out struct {
				stderr string
				code   int
				at     time.Time
			}
			done := make(chan out, 1)
			go func() {
				var o, e bytes.Buffer
				code := run([]string{"-addr", ip, "-port", srv.port, "-mode", mode, "-op", "write", "-duration", "60s", "-timeout", "2s"}, &o, &e)
				done <- out{e.String(), code, time.Now()}
			}()
			time.Sleep(2 * time.Second) // connected and writing
			killed := time.Now()
			require.NoError(t, srv.cmd.Process.Signal(syscall.SIGKILL))
			select {
			case r := <-done:
				require.Equal(t, exitFailure, r.code, r.stderr)
				took := r.at.Sub(killed)
				t.Logf("the client exited %v after the kill: %s", took, strings.TrimSpace(r.stderr))
				require.Less(t, took, 8*time.Second)
			case <-time.After(30 * time.Second):
				t.Fatal("the client did not exit in 30 s after the server was killed")
			}
			var ee *exec.ExitError
			require.True(t, errors.As(srv.wait(t, 10*time.Second), &ee))
		})
	}
}

// sizeList is sizes as -size takes them.
func sizeList(sizes []int) string {
	var b strings.Builder
	for i, n := range sizes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}
