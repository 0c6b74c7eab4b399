//go:build linux

package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// signalGrace is how long a forwarded signal may take to end the command
// before the VM is killed.
const signalGrace = 30 * time.Second

// barrierPoll is how often a multi-node run looks whether every node is
// ready to start its command.
const barrierPoll = 20 * time.Millisecond

// PowerLossSignal, sent to rxevm with two nodes, kills node 0's VM at once
// (a power loss of the server side); node 1 runs on.
const PowerLossSignal = syscall.SIGUSR1

// Run boots the VM (or the two VMs) of cfg, runs the command(s) and returns
// the exit status: the command's own, or one of ExitBootFailed,
// ExitNoStatus and ExitTimeout. With two nodes it is node 1's status if
// that is not zero, else node 0's (ignored if node 0 was killed with
// PowerLossSignal). Signals received on sigs are forwarded to the
// commands' process groups; a second one, or the first one's grace period
// running out, kills the VMs. The error, when not nil, explains a status
// that is not a command's own.
func Run(ctx context.Context, cfg Config, sigs <-chan os.Signal) (int, error) {
	cfg.setDefaults()
	if cfg.Nodes != 1 && cfg.Nodes != 2 {
		return ExitBootFailed, prepErr("nodes", fmt.Errorf("-nodes %d: want 1 or 2", cfg.Nodes), "")
	}
	if cfg.ICount && cfg.CPUs != 1 {
		return ExitBootFailed, prepErr("cpus", fmt.Errorf("-cpus %d with -icount: want 1 (a second vCPU does not come up under instruction counting)", cfg.CPUs), "")
	}
	if len(cfg.Argv) == 0 {
		return ExitBootFailed, prepErr("command", errors.New("no command given"), "")
	}
	p, err := Prepare(cfg)
	if err != nil {
		return ExitBootFailed, err
	}
	cfg = p.cfg
	nodes := []Node{{Index: 0, Argv: cfg.Argv, PMem: cfg.PMem}}
	if cfg.Nodes == 2 {
		w, err := NewWire(cfg.NetEm)
		if err != nil {
			return ExitBootFailed, prepErr("wire", err, "")
		}
		argv1 := cfg.Argv1
		if len(argv1) == 0 {
			argv1 = cfg.Argv
		}
		nodes[0].Wire, nodes[0].HoldStart = w, true
		nodes = append(nodes, Node{Index: 1, Argv: argv1, Wire: w, HoldStart: true})
	}
	for attempt := 1; ; attempt++ {
		code, retry, err := runOnce(ctx, cfg, p, nodes, sigs)
		if !retry || attempt == BootAttempts {
			return code, err
		}
		fmt.Fprintf(cfg.Log, "%v; booting a fresh VM (attempt %d of %d)\n", err, attempt+1, BootAttempts)
	}
}

// BootAttempts is how many times Run boots the VMs of a run in which a
// kernel crashed, or hung past Config.BootTimeout, before any command
// started. Under TCG with several vCPUs the guest kernel rarely oopses in
// boot: a vCPU runs the int3 of a static-key patch after the patch is done
// (a stale translation), in sched_clock_cpu each time CI saw it, on single
// VMs and on node 1 of a two-node run. Once (6.1, a single VM) CI saw a
// guest hang instead, two vCPUs in soft lockup from about a minute of
// guest time on; with softlockup_panic (kernelCmdline) and the boot
// timeout either kind ends the VM. No command ran (a multi-node run holds
// every command until all nodes are ready), so fresh VMs are safe and are
// what the caller wants.
const BootAttempts = 3

// runOnce boots the machines of nodes, runs their commands and returns
// Run's result; retry reports a VM that died, or hung past the boot
// timeout, before any command started, with no signal, run timeout or
// cancellation involved.
func runOnce(ctx context.Context, cfg Config, p *Prepared, nodes []Node, sigs <-chan os.Signal) (code int, retry bool, err error) {
	var machines []*Machine
	defer func() {
		for _, m := range machines {
			m.Close()
		}
	}()
	for _, n := range nodes {
		m, err := p.Start(n)
		if err != nil {
			return ExitBootFailed, false, err
		}
		machines = append(machines, m)
	}

	allDone := make(chan struct{})
	go func() {
		for _, m := range machines {
			<-m.Done()
		}
		close(allDone)
	}()
	killAll := func() {
		for _, m := range machines {
			m.Kill()
		}
	}
	timeout := time.NewTimer(cfg.Timeout)
	defer timeout.Stop()
	bootTimeout := time.NewTimer(cfg.BootTimeout)
	defer bootTimeout.Stop()
	var hung *Machine // a VM that did not reach its command in time
	// Nodes held at the start barrier: look every barrierPoll until all
	// are ready, or one ended.
	state, pollBarrier := barrierReleased, (<-chan time.Time)(nil)
	if nodes[0].HoldStart {
		tick := time.NewTicker(barrierPoll)
		defer tick.Stop()
		state, pollBarrier = barrierWaiting, tick.C
	}
	var grace <-chan time.Time
	var ended *Machine // the node that broke the barrier
	var barrierErr error
	timedOut, powerLoss := false, false
loop:
	for {
		select {
		case <-allDone:
			break loop
		case <-pollBarrier:
			state, ended, barrierErr = releaseWhenReady(machines)
			if state != barrierWaiting {
				pollBarrier = nil
			}
			if state == barrierBroken {
				for _, m := range machines { // no command started: none is cut short
					if m != ended {
						m.Kill()
					}
				}
			}
		case s := <-sigs:
			n, ok := s.(syscall.Signal)
			switch {
			case ok && n == PowerLossSignal && len(machines) == 2:
				fmt.Fprintf(cfg.Log, "rxevm: %v: power loss of node 0\n", s)
				powerLoss = true
				machines[0].Kill()
			case grace != nil:
				fmt.Fprintf(cfg.Log, "rxevm: second signal (%v): killing the VM\n", s)
				killAll()
			case ok:
				for _, m := range machines {
					m.Signal(n)
				}
				grace = time.After(signalGrace)
			}
		case <-grace:
			fmt.Fprintf(cfg.Log, "rxevm: command still running %v after the signal: killing the VM\n", signalGrace)
			killAll()
		case <-ctx.Done():
			killAll()
			<-allDone
			return ExitTimeout, false, fmt.Errorf("rxevm: %w", ctx.Err())
		case <-bootTimeout.C:
			if hung = bootHung(machines); hung != nil {
				hung.dumpDmesg(5 * time.Second)
				killAll()
			}
		case <-timeout.C:
			timedOut = true
			var wg sync.WaitGroup
			for _, m := range machines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					m.dumpDmesg(5 * time.Second)
				}()
			}
			wg.Wait()
			killAll()
		}
	}
	if cfg.Verbose {
		fmt.Fprintf(cfg.Log, "rxevm: VM ran %.2fs\n", machines[0].Elapsed().Seconds())
	}
	if timedOut {
		for _, m := range machines {
			m.Result(io.Discard)
			printTail(cfg.Log, m.label()+"guest dmesg", m.dmesgText(), 40)
		}
		return ExitTimeout, false, fmt.Errorf("rxevm: timeout: the VM ran longer than %v and was killed", cfg.Timeout)
	}
	if hung != nil {
		printTail(cfg.Log, hung.label()+"guest dmesg", hung.dmesgText(), 40)
		err := fmt.Errorf("rxevm: %sthe VM did not start its command within %v (a hung boot)", hung.label(), cfg.BootTimeout)
		return ExitBootFailed, grace == nil, err
	}
	if len(machines) == 1 {
		code, err := machines[0].Result(cfg.Log)
		return code, grace == nil && machines[0].DiedBeforeCommand(), err
	}
	if state != barrierReleased {
		// A VM ended (or was signalled) before every node was ready; its
		// result is the run's. The others were killed while held.
		if m := endedFirst(ended, machines); m != nil {
			code, err := m.Result(cfg.Log)
			return code, grace == nil && m.DiedBeforeCommand(), err
		}
		if barrierErr != nil {
			return ExitBootFailed, false, barrierErr
		}
	}
	code1, err1 := machines[1].Result(cfg.Log)
	if code1 != 0 {
		return code1, false, err1
	}
	if powerLoss {
		return 0, false, nil
	}
	code, err = machines[0].Result(cfg.Log)
	return code, false, err
}

// dmesgText is the guest's dmesg if it wrote one, else the console.
func (m *Machine) dmesgText() string {
	if b, err := os.ReadFile(m.runDir + "/" + ctlDmesg); err == nil && len(b) > 0 {
		return string(b)
	}
	return m.console.String()
}

func printTail(w io.Writer, what, text string, n int) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	fmt.Fprintf(w, "rxevm: --- %s (last %d lines) ---\n", what, len(lines))
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", strings.TrimRight(l, "\r"))
	}
	fmt.Fprintf(w, "rxevm: --- end of %s ---\n", what)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
