//go:build linux

package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// signalGrace is how long a forwarded signal may take to end the command
// before the VM is killed.
const signalGrace = 30 * time.Second

// Run boots a VM, runs cfg.Argv in it and returns the command's exit
// status, or one of ExitBootFailed, ExitNoStatus and ExitTimeout. Signals
// received on sigs are forwarded to the command's process group; a second
// signal, or the first one's grace period running out, kills the VM. The
// error, when not nil, explains a status that is not the command's own.
func Run(ctx context.Context, cfg Config, sigs <-chan os.Signal) (int, error) {
	cfg.setDefaults()
	if cfg.Nodes != 1 {
		return ExitBootFailed, prepErr("nodes", fmt.Errorf("-nodes %d: only 1 is implemented", cfg.Nodes), "")
	}
	if len(cfg.Argv) == 0 {
		return ExitBootFailed, prepErr("command", errors.New("no command given"), "")
	}
	qemu, err := exec.LookPath(qemuBinary)
	if err != nil {
		return ExitBootFailed, prepErr("qemu", err, "apt-get install qemu-system-x86 (or run `make setup`)")
	}
	if cfg.TmpDir == "" {
		cfg.TmpDir = os.TempDir()
	}
	if cfg.TmpDir, err = filepath.Abs(cfg.TmpDir); err != nil {
		return ExitBootFailed, prepErr("tmpdir", err, "")
	}
	if cfg.Dir == "" {
		cfg.Dir, _ = os.Getwd()
	}
	prepLog := io.Discard
	if cfg.Verbose {
		prepLog = cfg.Log
	}
	cacheDir, err := CacheDir()
	if err != nil {
		return ExitBootFailed, prepErr("cache dir", err, "set RXEVM_CACHE")
	}
	k, err := EnsureKernel(cacheDir, cfg.Kernel, cfg.Log)
	if err != nil {
		return ExitBootFailed, err
	}
	initrd, err := EnsureInitramfs(cacheDir, k, nil, cfg.Log)
	if err != nil {
		return ExitBootFailed, err
	}
	agent, err := os.Executable()
	if err == nil {
		agent, err = filepath.EvalSymlinks(agent)
	}
	if err != nil {
		return ExitBootFailed, prepErr("agent", err, "")
	}
	fmt.Fprintf(prepLog, "rxevm: kernel %s, initramfs %s, agent %s\n", k.Release, initrd, agent)

	runDir, err := os.MkdirTemp(cfg.TmpDir, "rxevm-run-")
	if err != nil {
		return ExitBootFailed, prepErr("run dir", err, "")
	}
	defer os.RemoveAll(runDir)
	j := &job{Argv: cfg.Argv, Dir: cfg.Dir, Env: cfg.Env,
		Node: nodeSpec{Index: 0, IP: TestIP, Prefix: 24, Netdev: "dummy"}}
	for name, data := range map[string]string{ctlAgent: agent, ctlTmpDir: cfg.TmpDir} {
		if err := os.WriteFile(filepath.Join(runDir, name), []byte(data), 0o644); err != nil {
			return ExitBootFailed, prepErr("run dir", err, "")
		}
	}
	if err := writeJob(runDir, j); err != nil {
		return ExitBootFailed, prepErr("run dir", err, "")
	}

	st, err := newStreams()
	if err != nil {
		return ExitBootFailed, prepErr("streams", err, "")
	}
	defer st.closeAll()
	var qemuErr bytes.Buffer
	cmd := exec.Command(qemu, qemuArgs(&cfg, k, initrd, runDir)...)
	cmd.ExtraFiles = st.child
	cmd.Stderr = &qemuErr
	cmd.Stdout = &qemuErr
	// Own process group: a terminal's ^C reaches rxevm, which forwards it
	// to the command, not qemu, which would quit. Pdeathsig: qemu dies
	// with rxevm even when rxevm is SIGKILLed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ExitBootFailed, prepErr("starting qemu", err, "")
	}
	st.closeChild()

	console := &tailBuffer{max: 64 << 10}
	var consoleW io.Writer = console
	if cfg.Verbose {
		consoleW = io.MultiWriter(console, cfg.Log)
	}
	var copiers sync.WaitGroup
	copyStream := func(dst io.Writer, src *os.File) {
		copiers.Add(1)
		go func() {
			defer copiers.Done()
			io.Copy(dst, src)
		}()
	}
	copyStream(consoleW, st.host[streamConsole])
	copyStream(cfg.Stdout, st.host[streamStdout])
	copyStream(cfg.Stderr, st.host[streamStderr])

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ctl := st.host[streamCtl]
	timeout := time.NewTimer(cfg.Timeout)
	defer timeout.Stop()
	var grace <-chan time.Time
	timedOut, killed := false, false
	kill := func() {
		if !killed {
			killed = true
			cmd.Process.Kill()
		}
	}
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-exited:
			break loop
		case s := <-sigs:
			if grace != nil {
				fmt.Fprintf(cfg.Log, "rxevm: second signal (%v): killing the VM\n", s)
				kill()
				continue
			}
			if n, ok := s.(syscall.Signal); ok {
				fmt.Fprintf(ctl, "signal %d\n", int(n))
			}
			grace = time.After(signalGrace)
		case <-grace:
			fmt.Fprintf(cfg.Log, "rxevm: command still running %v after the signal: killing the VM\n", signalGrace)
			kill()
		case <-ctx.Done():
			kill()
		case <-timeout.C:
			timedOut = true
			fmt.Fprintf(ctl, "dump\n")
			waitFile(filepath.Join(runDir, ctlDmesg+".done"), 5*time.Second, exited)
			kill()
		}
	}
	copiers.Wait()
	elapsed := time.Since(start)
	fmt.Fprintf(prepLog, "rxevm: VM ran %.2fs\n", elapsed.Seconds())

	dmesgTail := func() {
		text := console.String()
		if b, err := os.ReadFile(filepath.Join(runDir, ctlDmesg)); err == nil && len(b) > 0 {
			text = string(b)
		}
		printTail(cfg.Log, "guest dmesg", text, 40)
	}
	switch {
	case timedOut:
		dmesgTail()
		return ExitTimeout, fmt.Errorf("rxevm: timeout: the VM ran longer than %v and was killed", cfg.Timeout)
	case ctx.Err() != nil:
		return ExitTimeout, fmt.Errorf("rxevm: %w", ctx.Err())
	}
	if b, err := os.ReadFile(filepath.Join(runDir, ctlStatus)); err == nil {
		code, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return ExitNoStatus, fmt.Errorf("rxevm: bad status %q", b)
		}
		if code != 0 {
			dmesgTail()
		}
		return code, nil
	}
	dmesgTail()
	if qemuErr.Len() > 0 {
		printTail(cfg.Log, "qemu", qemuErr.String(), 20)
	}
	if b, err := os.ReadFile(filepath.Join(runDir, ctlBootError)); err == nil {
		return ExitBootFailed, fmt.Errorf("rxevm: guest setup failed: %s", strings.TrimSpace(string(b)))
	}
	if _, err := os.Stat(filepath.Join(runDir, ctlStarted)); err == nil {
		return ExitNoStatus, fmt.Errorf("rxevm: the command gave no status (VM exited: %v)", waitErr)
	}
	return ExitBootFailed, fmt.Errorf("rxevm: the VM did not boot (qemu: %v)", waitErr)
}

// waitFile waits until path exists, the VM exits, or d passes.
func waitFile(path string, d time.Duration, exited chan error) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-exited:
			exited <- err
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
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
