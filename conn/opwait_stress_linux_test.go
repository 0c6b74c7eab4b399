//go:build linux && cgo

package conn_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationOpWaitStress: 64 goroutines on one connection call the
// waiting operations with contexts that end at random (before the post,
// or while the operation is in flight), until the connection ends under
// them: the other side disconnects, this side closes, or the other
// side's process is killed (SIGKILL; its target memory is a shared
// mapping of a file, which outlives it). Every call returns, with nil,
// its ctx's error, an error matching rpma.ErrConnBroken or os.ErrClosed,
// and never rpma.ErrQueueFull; each goroutine's acknowledged durable
// write is in the target afterwards, and each read returns a value the
// goroutine wrote (at least its last acknowledged one); no file
// descriptor is left behind. Bounded: the operations run for a second,
// and everything must have returned 30 s after the end.
func TestIntegrationOpWaitStress(t *testing.T) {
	for _, end := range []stressEnd{endDisconnect, endClose, endKill} {
		t.Run(string(end), func(t *testing.T) { opWaitStress(t, end) })
	}
}

type stressEnd string

const (
	endDisconnect stressEnd = "the other side disconnects"
	endClose      stressEnd = "this side closes"
	endKill       stressEnd = "the other side's process is killed"
)

const (
	stressG    = 64
	stressSlot = 64
	// envStressChild runs TestHelperStressServer as the killed side.
	envStressChild = "RPMA_TEST_STRESS_SERVER"
)

// TestHelperStressServer is the other side of the stress's killed-process
// case, in a child process: it registers a shared mapping of a file as
// the target, gives its descriptor as private data and waits for SIGKILL.
func TestHelperStressServer(t *testing.T) {
	if os.Getenv(envStressChild) == "" {
		t.Log("the other side of TestIntegrationOpWaitStress's killed case (runs in a child process)")
		return
	}
	// The parent's memfd (ExtraFiles[0]): its pages outlive this process.
	mem, err := unix.Mmap(3, 0, stressG*stressSlot, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	// A device with native flush grants a persistent flush only on
	// persistent memory (rxe with rdma-core 56 refuses it on a memfd's
	// pages): the run then flushes for visibility, which is what a killed
	// process's memory can show anyway.
	flush := rpma.FlushPersistent
	m, err := mr.Reg(p, mem, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent)
	if errors.Is(err, syscall.EINVAL) {
		flush = rpma.FlushVisibility
		m, err = mr.Reg(p, mem, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushVisibility)
	}
	require.NoError(t, err)
	fmt.Printf("FLUSH %d\n", flush)
	fmt.Printf("PORT %s\n", e.Port())
	req, err := e.NextConnReq(context.Background(), nil)
	require.NoError(t, err)
	d := m.Descriptor()
	c, err := req.Connect(d[:])
	require.NoError(t, err)
	ev, err := c.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	select {} // until SIGKILL
}

// stressTarget is the other side of a stress run: its memory (read after
// the end) and how the run ends it.
type stressTarget struct {
	mem    func() []byte
	flush  rpma.FlushType // what its registration grants
	end    func()
	close  func() // after the run
	remote *mr.Remote
}

// killableServer starts TestHelperStressServer and connects to it.
func killableServer(t *testing.T, ctx context.Context, p *peer.Peer, ip string) (*conn.Conn, stressTarget) {
	// The target is a memfd's, shared with the child (a file in TMPDIR is
	// 9p in the VM, whose pages ibv_reg_mr cannot pin).
	fd, err := unix.MemfdCreate("stress-target", 0)
	require.NoError(t, err)
	file := os.NewFile(uintptr(fd), "stress-target")
	t.Cleanup(func() { file.Close() })
	require.NoError(t, file.Truncate(stressG*stressSlot))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStressServer$", "-test.v")
	cmd.Env = append(os.Environ(), envStressChild+"=1")
	cmd.ExtraFiles = []*os.File{file}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	port, flush := "", rpma.FlushPersistent
	for port == "" && lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 2 && f[0] == "PORT":
			port = f[1]
		case len(f) == 2 && f[0] == "FLUSH":
			n, err := strconv.Atoi(f[1])
			require.NoError(t, err)
			flush = rpma.FlushType(n)
			if flush == rpma.FlushVisibility {
				t.Log("the child's target grants a flush for visibility only: the run flushes for visibility")
			}
		default:
			t.Logf("child: %s", lines.Text())
		}
	}
	require.NotEmpty(t, port, "the child's port")
	go func() {
		for lines.Scan() {
		}
	}()
	req, err := conn.NewRequest(ctx, p, ip, port, conn.DefaultConfig())
	require.NoError(t, err)
	client, err := req.Connect(nil)
	require.NoError(t, err)
	ev, err := client.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	remote, err := mr.RemoteFromDescriptor(client.PrivateData())
	require.NoError(t, err)
	return client, stressTarget{
		remote: remote,
		flush:  flush,
		end: func() {
			require.NoError(t, cmd.Process.Kill())
			cmd.Wait()
		},
		mem: func() []byte {
			b := make([]byte, stressG*stressSlot)
			_, err := file.ReadAt(b, 0)
			require.NoError(t, err)
			return b
		},
		close: func() { require.NoError(t, file.Close()) }, // the memfd: no fd of the run's stays
	}
}

func opWaitStress(t *testing.T, end stressEnd) {
	const (
		G    = stressG
		slot = stressSlot
		runs = time.Second
	)
	p, ip := newPeer(t)
	ctx := testCtx(t)
	local, localMem := region(t, p, 2*G*slot, mr.UsageWriteSrc|mr.UsageReadDst)
	var (
		fds    int // before the connection
		client *conn.Conn
		other  stressTarget
	)
	if end == endKill {
		fds = openFDs(t)
		client, other = killableServer(t, ctx, p, ip)
	} else {
		e := listen(t, p, ip)
		target, targetMem := region(t, p, G*slot, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent)
		fds = openFDs(t)
		var server *conn.Conn
		client, server = pair(t, p, e, ip, nil, nil)
		other = stressTarget{
			remote: remoteOf(t, target),
			flush:  rpma.FlushPersistent,
			mem:    func() []byte { return targetMem },
			end:    func() { require.NoError(t, server.Close()) },
			close:  func() { require.NoError(t, server.Close()) },
		}
	}
	require.NoError(t, client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}))
	dst := other.remote

	var (
		stop     atomic.Bool
		mu       sync.Mutex
		outcomes = map[string]int{}
		problems []error
	)
	acked, attempted := make([]uint64, G), make([]uint64, G)
	classify := func(g int, what string, err error) (ok, end bool) {
		class := ""
		switch {
		case err == nil:
			class, ok = "ok", true
		case errors.Is(err, rpma.ErrQueueFull):
			class = "queue full"
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			class = "ctx"
		case errors.Is(err, os.ErrClosed):
			class, end = "closed", true
		case errors.Is(err, rpma.ErrConnBroken):
			class, end = "broken", true
		default:
			class = "unexpected"
		}
		mu.Lock()
		defer mu.Unlock()
		outcomes[what+": "+class]++
		if class == "queue full" || class == "unexpected" {
			problems = append(problems, fmt.Errorf("goroutine %d, %s: %w", g, what, err))
			end = true
		}
		return ok, end
	}
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			off, back := g*slot, G*slot+g*slot
			for seq := uint64(1); !stop.Load(); seq++ {
				opCtx, cancel := ctx, context.CancelFunc(func() {})
				switch rng.IntN(8) {
				case 0:
					opCtx, cancel = context.WithCancel(ctx)
					cancel() // ended before the post
				case 1, 2:
					opCtx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(2000))*time.Microsecond)
				}
				var ok, end bool
				if rng.IntN(3) == 0 {
					err := client.ReadWait(opCtx, local, back, dst, off, 8)
					if ok, end = classify(g, "ReadWait", err); ok {
						if v := binary.LittleEndian.Uint64(localMem[back:]); v < acked[g] || v > attempted[g] {
							mu.Lock()
							problems = append(problems, fmt.Errorf("goroutine %d read %d: acknowledged %d, attempted %d", g, v, acked[g], attempted[g]))
							mu.Unlock()
						}
					}
				} else {
					// The source only grows: a write whose ctx ended may
					// still read it later, and then carries a newer value.
					binary.LittleEndian.PutUint64(localMem[off:], seq)
					attempted[g] = seq
					err := client.WriteAndFlushWait(opCtx, dst, off, local, off, 8, other.flush)
					if ok, end = classify(g, "WriteAndFlushWait", err); ok {
						acked[g] = seq
					}
				}
				cancel()
				if end {
					return
				}
			}
		})
	}
	time.Sleep(runs)
	if end == endClose {
		require.NoError(t, client.Close())
	} else {
		other.end()
	}
	stop.Store(true)
	bounded(t, waitBound, "the goroutines after the connection ended", wg.Wait)
	t.Logf("outcomes: %v", outcomes)
	for _, err := range problems {
		t.Error(err)
	}
	targetMem := other.mem()
	for g := range G {
		v := binary.LittleEndian.Uint64(targetMem[g*slot:])
		require.GreaterOrEqual(t, v, acked[g], "goroutine %d: an acknowledged durable write is not in the target", g)
		require.LessOrEqual(t, v, attempted[g], "goroutine %d: the target holds a value never written", g)
	}
	require.Positive(t, outcomes["WriteAndFlushWait: ok"], "no write was acknowledged: the test tested nothing")
	require.NoError(t, client.Close())
	other.close()
	require.Equal(t, fds, openFDs(t), "file descriptors left behind by the connection")
}
