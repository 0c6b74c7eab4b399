//go:build linux

package vm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Prepared is a kernel and an initramfs ready to boot any number of VMs.
type Prepared struct {
	cfg    Config
	qemu   string
	kernel *Kernel
	initrd string
	agent  string
	us     *UserspaceRoot // nil: the host's userspace
}

// pmemModules are what a guest with an emulated NVDIMM loads besides the
// base modules: the nvdimm bus and Device DAX, and ext4 for FsDAX.
var pmemModules = []string{
	"libnvdimm", "nfit", "nd_btt", "nd_pmem", "dax_pmem", "device_dax",
	"crc32c_generic", "crc16", "mbcache", "jbd2", "ext4",
}

// Prepare finds (or fetches) the kernel and builds (or reuses) the
// initramfs that cfg needs. Nothing boots yet.
//
// The guest agent is the calling executable itself, so a program that
// boots VMs with Prepare and Start must begin like cmd/rxevm:
//
//	if vm.IsGuestAgent(os.Args) {
//		vm.GuestMain(os.Args[2])
//	}
//
// (a test binary does it in TestMain).
func Prepare(cfg Config) (*Prepared, error) {
	cfg.setDefaults()
	qemu, err := exec.LookPath(qemuBinary)
	if err != nil {
		return nil, prepErr("qemu", err, "apt-get install qemu-system-x86 (or run `make setup`)")
	}
	if cfg.TmpDir == "" {
		cfg.TmpDir = os.TempDir()
	}
	if cfg.TmpDir, err = filepath.Abs(cfg.TmpDir); err != nil {
		return nil, prepErr("tmpdir", err, "")
	}
	if cfg.Dir == "" {
		cfg.Dir, _ = os.Getwd()
	}
	if err := cfg.PMem.validate(); err != nil {
		return nil, prepErr("pmem", err, "")
	}
	cacheDir, err := CacheDir()
	if err != nil {
		return nil, prepErr("cache dir", err, "set RXEVM_CACHE")
	}
	k, err := EnsureKernel(cacheDir, cfg.Kernel, cfg.Log)
	if err != nil {
		return nil, err
	}
	// One initramfs serves every mode: the NVDIMM modules cost ~0.3 s of
	// boot only where they are loaded (init loads them on demand).
	initrd, err := EnsureInitramfs(cacheDir, k, pmemModules, cfg.Log)
	if err != nil {
		return nil, err
	}
	var us *UserspaceRoot
	if cfg.Userspace != "" {
		if us, err = EnsureUserspace(cacheDir, cfg.Userspace, cfg.Log); err != nil {
			return nil, err
		}
	}
	agent, err := os.Executable()
	if err == nil {
		agent, err = filepath.EvalSymlinks(agent)
	}
	if err != nil {
		return nil, prepErr("agent", err, "")
	}
	if cfg.Verbose {
		fmt.Fprintf(cfg.Log, "rxevm: kernel %s, initramfs %s, agent %s\n", k.Release, initrd, agent)
	}
	return &Prepared{cfg: cfg, qemu: qemu, kernel: k, initrd: initrd, agent: agent, us: us}, nil
}

// Userspace is the guest userspace the prepared VMs run their command in
// (nil: the host's).
func (p *Prepared) Userspace() *UserspaceRoot { return p.us }

// Kernel is the kernel the prepared VMs boot.
func (p *Prepared) Kernel() *Kernel { return p.kernel }

// Wire is a virtual Ethernet wire between two VMs: qemu socket netdevs in
// UDP mode over host loopback. UDP needs no start order, so a node killed
// (power loss) can be booted again on the same wire.
type Wire struct {
	Ports [2]int // each node's local UDP port on 127.0.0.1
	NetEm string // tc netem parameters applied in each guest, or ""
}

// NewWire picks two free UDP ports on the loopback.
func NewWire(netem string) (*Wire, error) {
	w := &Wire{NetEm: netem}
	for i := range w.Ports {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		w.Ports[i] = c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
	}
	return w, nil
}

// Node is one VM to start.
type Node struct {
	Index          int // 0 or 1: the address (NodeIP) and the MAC
	Argv           []string
	Stdout, Stderr io.Writer // default: the Config's
	PMem           PMem      // an emulated NVDIMM, if Size > 0
	Wire           *Wire     // nil: rxe0 on a dummy netdev, no wire
	// HoldStart: the guest sets up, then waits for Release before it
	// starts the command (see Ready).
	HoldStart bool
}

// Machine is a running VM.
type Machine struct {
	Index   int
	cmd     *exec.Cmd
	runDir  string
	pmemTmp string // a fresh NVDIMM file, removed at the end
	st      *streams
	console *tailBuffer
	qemuErr bytes.Buffer
	copiers sync.WaitGroup
	done    chan struct{}
	waitErr error
	killed  bool
	mu      sync.Mutex
	start   time.Time
}

// Start boots node n. The VM runs until its command ends, or Kill.
func (p *Prepared) Start(n Node) (*Machine, error) {
	cfg := &p.cfg
	if len(n.Argv) == 0 {
		return nil, prepErr("command", errors.New("no command given"), "")
	}
	if n.Stdout == nil {
		n.Stdout = cfg.Stdout
	}
	if n.Stderr == nil {
		n.Stderr = cfg.Stderr
	}
	if n.PMem.Size > 0 && n.PMem.Mode == "" {
		n.PMem.Mode = "devdax"
	}
	if err := n.PMem.validate(); err != nil {
		return nil, prepErr("pmem", err, "")
	}
	m := &Machine{Index: n.Index, done: make(chan struct{}), console: &tailBuffer{max: 64 << 10}}
	var err error
	m.runDir, err = os.MkdirTemp(cfg.TmpDir, "rxevm-run-")
	if err != nil {
		return nil, prepErr("run dir", err, "")
	}
	ok := false
	defer func() {
		if !ok {
			m.cleanup()
		}
	}()
	spec := nodeSpec{Index: n.Index, IP: NodeIP(n.Index), Prefix: 24, Netdev: "dummy"}
	if n.Wire != nil {
		spec.Netdev, spec.NetEm, spec.PeerIP = "virtio", n.Wire.NetEm, NodeIP(1-n.Index)
	}
	if n.PMem.Size > 0 {
		spec.PMemMode = n.PMem.Mode
		if n.PMem.File == "" {
			n.PMem.File = filepath.Join(m.runDir, "nvdimm")
			m.pmemTmp = n.PMem.File
		}
		if err := preparePMemFile(n.PMem); err != nil {
			return nil, prepErr("pmem", err, "")
		}
	}
	j := &job{Argv: n.Argv, Dir: cfg.Dir, Env: cfg.Env, Node: spec, HoldStart: n.HoldStart}
	if p.us != nil {
		j.Userspace, j.UserspaceRoot = p.us.Name, p.us.Root
	}
	for name, data := range map[string]string{ctlAgent: p.agent, ctlTmpDir: cfg.TmpDir, ctlModules: modulesFor(spec)} {
		if err := os.WriteFile(filepath.Join(m.runDir, name), []byte(data), 0o644); err != nil {
			return nil, prepErr("run dir", err, "")
		}
	}
	if err := writeJob(m.runDir, j); err != nil {
		return nil, prepErr("run dir", err, "")
	}
	if m.st, err = newStreams(); err != nil {
		return nil, prepErr("streams", err, "")
	}
	usRoot := ""
	if p.us != nil {
		usRoot = p.us.Root
	}
	m.cmd = exec.Command(p.qemu, qemuArgs(cfg, p.kernel, p.initrd, m.runDir, usRoot, &n)...)
	m.cmd.ExtraFiles = m.st.child
	m.cmd.Stdout, m.cmd.Stderr = &m.qemuErr, &m.qemuErr
	// Own process group: a terminal's ^C reaches rxevm, which forwards it
	// to the command, not qemu, which would quit. Pdeathsig: qemu dies
	// with rxevm even when rxevm is SIGKILLed.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	m.start = time.Now()
	if err := m.cmd.Start(); err != nil {
		return nil, prepErr("starting qemu", err, "")
	}
	m.st.closeChild()
	var consoleW io.Writer = m.console
	if cfg.Verbose {
		consoleW = io.MultiWriter(m.console, cfg.Log)
	}
	m.copy(consoleW, m.st.host[streamConsole])
	m.copy(n.Stdout, m.st.host[streamStdout])
	m.copy(n.Stderr, m.st.host[streamStderr])
	go func() {
		m.waitErr = m.cmd.Wait()
		m.copiers.Wait()
		close(m.done)
	}()
	ok = true
	return m, nil
}

func (m *Machine) copy(dst io.Writer, src *os.File) {
	m.copiers.Add(1)
	go func() {
		defer m.copiers.Done()
		io.Copy(dst, src)
	}()
}

// Done is closed when the VM has exited and its output is drained.
func (m *Machine) Done() <-chan struct{} { return m.done }

// Signal forwards sig to the command's process group in the guest.
func (m *Machine) Signal(sig syscall.Signal) error {
	_, err := fmt.Fprintf(m.st.host[streamCtl], "signal %d\n", int(sig))
	return err
}

// Kill stops the VM at once, like pulling its power cord: what the guest
// had not written back is lost; what it wrote to the NVDIMM stays.
func (m *Machine) Kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.killed {
		m.killed = true
		m.cmd.Process.Kill()
	}
}

func (m *Machine) wasKilled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.killed
}

// dumpDmesg asks the guest to write its dmesg to the control directory and
// waits up to d for it.
func (m *Machine) dumpDmesg(d time.Duration) {
	fmt.Fprintf(m.st.host[streamCtl], "dump\n")
	path := filepath.Join(m.runDir, ctlDmesg+".done")
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-m.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Dmesg returns the guest's kernel log: a fresh dump from a running guest
// (waiting up to d for it), else what the guest left, else the console.
// For tests that show both guests' logs when they fail.
func (m *Machine) Dmesg(d time.Duration) string {
	select {
	case <-m.done:
	default:
		m.dumpDmesg(d)
	}
	return m.dmesgText()
}

// Elapsed is how long the VM ran (so far).
func (m *Machine) Elapsed() time.Duration { return time.Since(m.start) }

// Result waits for the VM and returns the command's exit status, or
// ExitNoStatus or ExitBootFailed with an error that says why. On failure it
// prints the tail of the guest's dmesg (or console) to log.
func (m *Machine) Result(log io.Writer) (int, error) {
	<-m.done
	dmesgTail := func() { printTail(log, m.label()+"guest dmesg", m.dmesgText(), 40) }
	if b, err := os.ReadFile(filepath.Join(m.runDir, ctlStatus)); err == nil {
		code, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return ExitNoStatus, fmt.Errorf("rxevm: %sbad status %q", m.label(), b)
		}
		if code != 0 {
			dmesgTail()
		}
		return code, nil
	}
	dmesgTail()
	if m.qemuErr.Len() > 0 {
		printTail(log, m.label()+"qemu", m.qemuErr.String(), 20)
	}
	if b, err := os.ReadFile(filepath.Join(m.runDir, ctlBootError)); err == nil {
		return ExitBootFailed, fmt.Errorf("rxevm: %sguest setup failed: %s", m.label(), strings.TrimSpace(string(b)))
	}
	if _, err := os.Stat(filepath.Join(m.runDir, ctlStarted)); err == nil {
		if m.killed {
			return ExitNoStatus, fmt.Errorf("rxevm: %sVM killed before the command ended", m.label())
		}
		return ExitNoStatus, fmt.Errorf("rxevm: %sthe command gave no status (VM exited: %v)", m.label(), m.waitErr)
	}
	if m.wasKilled() {
		return ExitBootFailed, fmt.Errorf("rxevm: %sVM killed before its command started", m.label())
	}
	return ExitBootFailed, fmt.Errorf("rxevm: %sthe VM did not boot (qemu: %v)", m.label(), m.waitErr)
}

// DiedBeforeCommand reports, once the VM has exited, whether its guest
// never got as far as starting the command (nor as reporting a setup
// error) and nobody killed it: a boot crash.
func (m *Machine) DiedBeforeCommand() bool {
	<-m.done
	return !m.wasKilled() && !m.wrote(ctlStatus, ctlStarted, ctlBootError)
}

// wrote reports whether the guest wrote any of files to its control
// directory.
func (m *Machine) wrote(files ...string) bool {
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(m.runDir, f)); err == nil {
			return true
		}
	}
	return false
}

// bootHung returns the first machine still booting or setting up, one
// that has neither reached its command (nor the start barrier) nor ended,
// or nil.
func bootHung(machines []*Machine) *Machine {
	for _, m := range machines {
		select {
		case <-m.done:
			continue
		default:
		}
		if !m.wasKilled() && !m.wrote(ctlStarted, ctlReady, ctlStatus, ctlBootError) {
			return m
		}
	}
	return nil
}

func (m *Machine) label() string {
	if m.Index == 0 {
		return ""
	}
	return fmt.Sprintf("node %d: ", m.Index)
}

// Close kills the VM if it still runs and removes its run directory (and
// a temporary NVDIMM file).
func (m *Machine) Close() {
	m.Kill()
	<-m.done
	m.cleanup()
}

func (m *Machine) cleanup() {
	if m.st != nil {
		m.st.closeAll()
	}
	os.RemoveAll(m.runDir)
}

// preparePMemFile creates the NVDIMM backing file at its size if missing.
// An existing file of another size is refused: its namespace would not fit.
func preparePMemFile(p PMem) error {
	st, err := os.Stat(p.File)
	switch {
	case err == nil && st.Size() != p.Size:
		return fmt.Errorf("%s is %d bytes, not %d: refusing to resize an NVDIMM image", p.File, st.Size(), p.Size)
	case err == nil:
		return nil
	case !os.IsNotExist(err):
		return err
	}
	f, err := os.OpenFile(p.File, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(p.Size)
}
