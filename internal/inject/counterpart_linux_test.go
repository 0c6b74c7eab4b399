//go:build rpma_inject && linux && cgo

package inject_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

// The other side of every connection a sequence makes runs in a second
// process (this test binary, re-run with envRole set): injection state
// and occurrence counts are per process, so the counterpart's C calls
// never shift the sequence's points, and nothing is injected there.
const (
	envRole = "RPMA_INJECT_ROLE" // "serve" or "connect"
	envAddr = "RPMA_INJECT_ADDR" // ip:port
	msgSize = 8
)

// counterpart is a running helper process; it stops when its stdin
// closes.
type counterpart struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
}

// startCounterpart starts the helper in role at ip:port and waits until it
// says it is ready.
func startCounterpart(t *testing.T, role, ip, port string) *counterpart {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRole+"="+role, envAddr+"="+ip+":"+port)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
			}
		}
		ready <- errors.New("counterpart exited before it was ready")
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("counterpart not ready within 30 s")
	}
	c := &counterpart{cmd: cmd, stdin: stdin}
	t.Cleanup(c.stop)
	return c
}

func (c *counterpart) stop() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// runCounterpart is the helper process's main: it serves or connects in
// a loop until its stdin closes, and returns the exit code.
func runCounterpart(role string) int {
	ip, port, _ := strings.Cut(os.Getenv(envAddr), ":")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // stdin closed: stop
		bufio.NewReader(os.Stdin).ReadString('\n')
		cancel()
	}()
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	if err != nil {
		fmt.Fprintln(os.Stderr, "counterpart:", err)
		return 1
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		fmt.Fprintln(os.Stderr, "counterpart:", err)
		return 1
	}
	defer p.Close()
	mem, err := pmem.Alloc(4096)
	if err != nil {
		fmt.Fprintln(os.Stderr, "counterpart:", err)
		return 1
	}
	defer mem.Close()
	m, err := mr.Reg(p, mem.Bytes(), mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushVisibility|
		mr.UsageAtomicDst|mr.UsageSend|mr.UsageRecv|mr.UsageWriteSrc|mr.UsageReadDst)
	if err != nil {
		fmt.Fprintln(os.Stderr, "counterpart:", err)
		return 1
	}
	defer m.Dereg()
	switch role {
	case "serve":
		e, err := ep.Listen(p, ip, port)
		if err != nil {
			fmt.Fprintln(os.Stderr, "counterpart:", err)
			return 1
		}
		defer e.Close()
		fmt.Println("ready")
		for ctx.Err() == nil {
			serveOne(ctx, e, m)
		}
	case "connect":
		fmt.Println("ready")
		for ctx.Err() == nil {
			if !connectOne(ctx, p, ip, port, m) {
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	}
	return 0
}

// serveOne accepts one connection, offering m (its extended descriptor,
// so that atomics may use it): it receives the sequence's one message,
// sends it one, and waits for the sequence to hang up. Any failure ends
// the round: the sequence side may have failed on purpose.
func serveOne(ctx context.Context, e *ep.Endpoint, m *mr.Local) {
	cfg := conn.DefaultConfig()
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return
	}
	if err := req.Recv(m, 1024, msgSize, 1); err != nil {
		req.Close()
		return
	}
	desc := m.ExtendedDescriptor()
	c, err := req.Connect(desc[:])
	if err != nil {
		return
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if ev, err := c.NextEvent(rctx); err != nil || ev != rpma.ConnEstablished {
		return
	}
	if err := c.Send(m, 2048, msgSize, rpma.CompletionAlways, 2); err == nil {
		session.WaitFor(rctx, c.CQ(), 2)
	}
	for {
		ev, err := c.NextEvent(rctx)
		if err != nil || ev != rpma.ConnEstablished {
			return
		}
	}
}

// connectOne connects to a sequence's endpoint once, and on success
// disconnects at once; it reports whether a connection was made.
func connectOne(ctx context.Context, p *peer.Peer, ip, port string, m *mr.Local) bool {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := conn.NewRequest(rctx, p, ip, port, conn.DefaultConfig())
	if err != nil {
		return false
	}
	c, err := req.Connect(nil)
	if err != nil {
		return false
	}
	defer c.Close()
	ev, err := c.NextEvent(rctx)
	if err != nil || ev != rpma.ConnEstablished {
		return false
	}
	c.Disconnect()
	for {
		if ev, err := c.NextEvent(rctx); err != nil || ev != rpma.ConnEstablished {
			return true
		}
	}
}
