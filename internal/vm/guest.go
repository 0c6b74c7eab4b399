//go:build linux

package vm

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Virtio-serial port names shared by host and guest.
const (
	portStdout = "rxevm.stdout"
	portStderr = "rxevm.stderr"
	portCtl    = "rxevm.ctl"
)

// IsGuestAgent reports whether args (os.Args) ask for the guest agent.
func IsGuestAgent(args []string) bool {
	return len(args) == 3 && args[1] == guestAgentFlag
}

// GuestMain is the guest agent: stage 2 of the guest's init, running as
// PID 1 in the chrooted guest root. It never returns: it powers the VM off.
func GuestMain(ctlDir string) {
	code, err := guestRun(ctlDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rxevm-agent: %v\n", err) // the console
		os.WriteFile(filepath.Join(ctlDir, ctlBootError), []byte(err.Error()+"\n"), 0o644)
	} else {
		if code != 0 {
			writeDmesg(ctlDir)
		}
		if err := writeFileAtomic(filepath.Join(ctlDir, ctlStatus), []byte(fmt.Sprintf("%d\n", code))); err != nil {
			fmt.Fprintf(os.Stderr, "rxevm-agent: writing status: %v\n", err)
		}
	}
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {}
}

func writeDmesg(ctlDir string) {
	out, _ := exec.Command("dmesg").CombinedOutput()
	os.WriteFile(filepath.Join(ctlDir, ctlDmesg), out, 0o644)
}

// guestRun sets up rxe, runs the command and returns its exit code. An
// error means the command never ran (the host reports a boot failure).
func guestRun(ctlDir string) (int, error) {
	j, err := readJob(ctlDir)
	if err != nil {
		return 0, fmt.Errorf("reading job: %w", err)
	}
	for _, kv := range j.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	if os.Getenv("PATH") == "" {
		os.Setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	if err := setupRXE(j.Node); err != nil {
		return 0, err
	}
	pmemEnv, err := setupPMem(j.Node.PMemMode)
	if err != nil {
		return 0, err
	}
	chroot, userspace := "", "host"
	if j.UserspaceRoot != "" {
		if chroot, err = layUserspace(ctlDir); err != nil {
			return 0, fmt.Errorf("userspace %s: %w", j.Userspace, err)
		}
		userspace = j.Userspace
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	release := unix.ByteSliceToString(uts.Release[:])

	stdout, err := openPort(portStdout, os.O_WRONLY)
	if err != nil {
		return 0, err
	}
	stderr, err := openPort(portStderr, os.O_WRONLY)
	if err != nil {
		return 0, err
	}
	ctl, err := openPort(portCtl, os.O_RDONLY)
	if err != nil {
		return 0, err
	}
	defer func() {
		stdout.Close()
		stderr.Close()
	}()
	switch injectedFault(j) {
	case faultCrash:
		os.Exit(1) // PID 1 exits: the kernel panics, as in a boot crash
	case faultHang:
		select {} // as a kernel hung while booting
	}
	control := bufio.NewScanner(ctl)
	if j.HoldStart {
		start, status, err := awaitStart(control, ctlDir)
		if err != nil || !start {
			return status, err
		}
	}
	if err := os.WriteFile(filepath.Join(ctlDir, ctlStarted), nil, 0o644); err != nil {
		return 0, err
	}

	env := append(append([]string{}, j.Env...),
		EnvTestIP+"="+j.Node.IP,
		EnvNode+"="+strconv.Itoa(j.Node.Index),
		EnvRequireRXE+"=1",
		EnvTestKernel+"="+release,
		EnvInsideVM+"=1",
		EnvUserspace+"="+userspace,
	)
	if j.Node.PeerIP != "" {
		env = append(env, EnvPeerIP+"="+j.Node.PeerIP)
	}
	env = append(env, pmemEnv...)
	if len(j.Argv) == 0 {
		return 0, errors.New("no command")
	}
	prog := j.Argv[0]
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		prog = filepath.Join(j.Dir, prog) // relative to the caller's directory
	}
	path, err := lookPathIn(chroot, prog)
	if err != nil {
		fmt.Fprintf(stderr, "rxevm: %v\n", err)
		return 127, nil
	}
	devnull, _ := os.Open(os.DevNull)
	cmd := &exec.Cmd{
		Path: path, Args: j.Argv, Dir: j.Dir, Env: env,
		Stdin: devnull, Stdout: stdout, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Chroot: chroot},
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "rxevm: %v\n", err)
		return 126, nil
	}
	go serveControl(control, cmd.Process.Pid, ctlDir)
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	default:
		fmt.Fprintf(stderr, "rxevm: %v\n", err)
		return 126, nil
	}
}

// serveControl executes the host's requests: "signal N" forwards signal N
// to the command's process group, "dump" writes the guest's dmesg.
func serveControl(ctl *bufio.Scanner, pid int, ctlDir string) {
	for ctl.Scan() {
		f := strings.Fields(ctl.Text())
		switch {
		case len(f) == 2 && f[0] == "signal":
			if n, err := strconv.Atoi(f[1]); err == nil {
				unix.Kill(-pid, unix.Signal(n))
			}
		case len(f) == 1 && f[0] == "dump":
			answerDump(ctlDir)
		}
	}
}

// answerDump writes the guest's dmesg for the host's "dump" request and
// then the file that says it is complete.
func answerDump(ctlDir string) {
	writeDmesg(ctlDir)
	os.WriteFile(filepath.Join(ctlDir, ctlDmesg+".done"), nil, 0o644)
}

// openPort opens the virtio-serial port named name (/dev/vportNpM).
func openPort(name string, flag int) (*os.File, error) {
	ents, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
	for _, e := range ents {
		b, err := os.ReadFile(e)
		if err == nil && strings.TrimSpace(string(b)) == name {
			return os.OpenFile("/dev/"+filepath.Base(filepath.Dir(e)), flag, 0)
		}
	}
	return nil, fmt.Errorf("virtio-serial port %s not found", name)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setupRXE brings up the node's netdev and rxe0 on it, and waits until
// rxe0's port is ACTIVE.
func setupRXE(n nodeSpec) error {
	if err := run("ip", "link", "set", "lo", "up"); err != nil {
		return err
	}
	netdev := "rt0"
	switch n.Netdev {
	case "dummy":
		if err := run("ip", "link", "add", netdev, "type", "dummy"); err != nil {
			return err
		}
	case "virtio":
		netdev = "eth0" // the only NIC; no udev renames it
	default:
		return fmt.Errorf("netdev kind %q not supported", n.Netdev)
	}
	steps := [][]string{
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", n.IP, n.Prefix), "dev", netdev},
		{"ip", "link", "set", netdev, "up"},
		{"rdma", "link", "add", "rxe0", "type", "rxe", "netdev", netdev},
	}
	if n.NetEm != "" {
		steps = append(steps, append([]string{"tc", "qdisc", "add", "dev", netdev, "root", "netem"}, strings.Fields(n.NetEm)...))
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	const state = "/sys/class/infiniband/rxe0/ports/1/state"
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(state)
		if err == nil && strings.Contains(string(b), "ACTIVE") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rxe0 not ACTIVE after 30s (state %q, %v)", strings.TrimSpace(string(b)), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setupPMem configures the emulated NVDIMM's namespace as mode asks (only
// when it is still raw: a configured namespace is kept, with its data) and
// returns the environment that names it.
func setupPMem(mode string) ([]string, error) {
	if mode == "" {
		return nil, nil
	}
	const ns = "namespace0.0"
	if err := waitPath("/sys/bus/nd/devices/"+ns, 20*time.Second); err != nil {
		return nil, fmt.Errorf("NVDIMM: %w", err)
	}
	out, err := exec.Command("ndctl", "list", "-N", "-n", ns).Output()
	if err != nil {
		return nil, fmt.Errorf("ndctl list: %w", err)
	}
	m := regexp.MustCompile(`"mode":"(\w+)"`).FindSubmatch(out)
	have := "raw"
	if m != nil {
		have = string(m[1])
	}
	switch {
	case have == mode:
	case have == "raw":
		if err := run("ndctl", "create-namespace", "-f", "-e", ns, "-m", mode, "-a", "2M"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("NVDIMM namespace is %s, not %s: refusing to re-create it (its data would be lost)", have, mode)
	}
	if mode == "devdax" {
		if err := waitPath("/dev/dax0.0", 10*time.Second); err != nil {
			return nil, err
		}
		return []string{EnvPMem + "=/dev/dax0.0", EnvPMemMode + "=devdax"}, nil
	}
	if err := waitPath("/dev/pmem0", 10*time.Second); err != nil {
		return nil, err
	}
	if out, _ := exec.Command("blkid", "-o", "value", "-s", "TYPE", "/dev/pmem0").Output(); strings.TrimSpace(string(out)) != "ext4" {
		// 4 KiB blocks: the 1 KiB default disables DAX.
		if err := run("mkfs.ext4", "-q", "-F", "-b", "4096", "/dev/pmem0"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(FsDAXMount, 0o755); err != nil {
		return nil, err
	}
	if err := run("mount", "-o", "dax", "/dev/pmem0", FsDAXMount); err != nil {
		return nil, err
	}
	return []string{EnvPMem + "=" + FsDAXMount, EnvPMemMode + "=fsdax"}, nil
}

func waitPath(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %v", path, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// EnvTestCrashBoots names a file, in the shared temp directory, holding a
// count N: while N > 0 the guest agent of the run's last node decrements
// it and dies once set up, before its command starts, which the host sees
// as a kernel that crashed while booting. With two nodes node 1 dies
// crashDelay after it is set up, when node 0 has long been ready: a start
// barrier that did not hold node 0 would let its command run. It exists
// for the test of rxevm's boot retry.
const EnvTestCrashBoots = "RXEVM_TEST_CRASH_BOOTS"

// EnvTestHangBoots is EnvTestCrashBoots for a boot that hangs: the guest
// agent never starts its command and the VM runs on, until the host's boot
// timeout (Config.BootTimeout).
const EnvTestHangBoots = "RXEVM_TEST_HANG_BOOTS"

// crashDelay: see EnvTestCrashBoots.
const crashDelay = 2 * time.Second

// bootFault is what the test hooks make a set-up guest do.
type bootFault int

const (
	faultNone  bootFault = iota
	faultCrash           // EnvTestCrashBoots
	faultHang            // EnvTestHangBoots
)

// injectedFault takes the fault this guest is to show now, if any.
func injectedFault(j *job) bootFault {
	twoNodes := j.Node.PeerIP != ""
	if twoNodes && j.Node.Index == 0 {
		return faultNone
	}
	for _, kv := range j.Env {
		if f, ok := strings.CutPrefix(kv, EnvTestCrashBoots+"="); ok && takeFault(f) {
			if twoNodes {
				time.Sleep(crashDelay)
			}
			return faultCrash
		}
		if f, ok := strings.CutPrefix(kv, EnvTestHangBoots+"="); ok && takeFault(f) {
			return faultHang
		}
	}
	return faultNone
}

// takeFault decrements the count in path and reports whether it was
// positive.
func takeFault(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return false
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(n-1)+"\n"), 0o644); err != nil {
		return false
	}
	unix.Sync()
	return true
}
