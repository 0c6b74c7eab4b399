//go:build linux

package vm

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Exit codes of a run that did not end with the command's own status. They
// sit just below the shell's 126/127 so that they never collide with a
// command's ordinary failures (1, 2, 42, ...).
const (
	// ExitNoStatus: the VM booted and started the command, but the command
	// gave no status (the guest crashed, panicked or was killed).
	ExitNoStatus = 123
	// ExitTimeout: the run's timeout fired and the VM was killed.
	ExitTimeout = 124
	// ExitBootFailed: the VM could not be prepared or booted (qemu or the
	// kernel image missing, initramfs build failed, guest init failed).
	ExitBootFailed = 125
)

// Defaults of Config.
const (
	DefaultKernel  = "6.12"
	DefaultTimeout = 20 * time.Minute
	// DefaultBootTimeout: see Config.BootTimeout. On a quiet host a 6.1
	// VM starts its command 4.4 s (7.8 s with an fsdax NVDIMM) after its
	// kernel starts; the margin is for a loaded host.
	DefaultBootTimeout = 3 * time.Minute
	DefaultCPUs        = 2
	DefaultMemMiB      = 2048
)

// TestIP is the address of rxe0's netdev in a single-node VM, and of node
// 0 (the server side) in the two-node mode. NodeIP gives each node's.
const TestIP = "192.0.2.1"

// NodeIP is the address of node i: 192.0.2.1 for node 0, 192.0.2.2 for
// node 1.
func NodeIP(i int) string { return "192.0.2." + strconv.Itoa(i+1) }

// Environment variables set for the command inside the VM.
const (
	EnvTestIP      = "RPMA_TEST_IP"          // this node's address
	EnvPeerIP      = "RPMA_TEST_PEER_IP"     // the other node's address (two nodes)
	EnvNode        = "RPMA_TEST_NODE"        // this node's index: 0 or 1
	EnvRequireRXE  = "RPMA_TEST_REQUIRE_RXE" // always 1
	EnvTestKernel  = "RPMA_TEST_KERNEL"      // the guest's kernel release
	EnvPMem        = "RPMA_TEST_PMEM"        // /dev/dax0.0 (devdax) or the FsDAX mount point
	EnvPMemMode    = "RPMA_TEST_PMEM_MODE"   // devdax or fsdax
	EnvInsideVM    = "RXEVM_GUEST"           // 1
	EnvUserspace   = "RPMA_TEST_USERSPACE"   // the guest userspace: host, or a name of Userspaces
	guestAgentFlag = "--rxevm-guest-agent"
)

// FsDAXMount is where the guest mounts the emulated NVDIMM's ext4 in fsdax
// mode.
const FsDAXMount = "/mnt/pmem"

// PMem describes an emulated NVDIMM. The zero value means none.
type PMem struct {
	// Size of the NVDIMM in bytes, a multiple of 2 MiB.
	Size int64
	// File backs the NVDIMM. Empty: a fresh temporary file, removed after
	// the run. A given file is created if missing and kept; a namespace
	// already configured on it is reused, never re-created, so its contents
	// survive from boot to boot (and across a killed VM: a power loss).
	File string
	// Mode is "devdax" (the default: /dev/dax0.0, Device DAX) or "fsdax"
	// (an ext4 file system mounted with -o dax at FsDAXMount).
	Mode string
}

// ParsePMem parses rxevm's -pmem value, SIZE[,FILE], with SIZE in bytes or
// with a K, M or G suffix.
func ParsePMem(s string) (PMem, error) {
	size, file, _ := strings.Cut(s, ",")
	mult := int64(1)
	switch {
	case strings.HasSuffix(size, "G"):
		mult, size = 1<<30, strings.TrimSuffix(size, "G")
	case strings.HasSuffix(size, "M"):
		mult, size = 1<<20, strings.TrimSuffix(size, "M")
	case strings.HasSuffix(size, "K"):
		mult, size = 1<<10, strings.TrimSuffix(size, "K")
	}
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n <= 0 {
		return PMem{}, fmt.Errorf("-pmem %q: want SIZE[,FILE], e.g. 256M or 256M,/var/tmp/nvdimm", s)
	}
	p := PMem{Size: n * mult, File: file}
	return p, p.validate()
}

func (p *PMem) validate() error {
	if p.Size == 0 {
		return nil
	}
	if p.Size%(2<<20) != 0 || p.Size < 16<<20 {
		return fmt.Errorf("pmem size %d: want a multiple of 2 MiB, at least 16 MiB", p.Size)
	}
	switch p.Mode {
	case "", "devdax", "fsdax":
	default:
		return fmt.Errorf("pmem mode %q: want devdax or fsdax", p.Mode)
	}
	return nil
}

// Config describes one run. The zero value of each field means its default.
type Config struct {
	// Kernel selects the guest kernel: a series ("6.12", the default, picks
	// the newest linux-image-6.12.N+deb12-amd64-unsigned; "6.1" picks the
	// kernel that linux-image-amd64 depends on) or a full package name.
	Kernel string
	// Timeout bounds the whole run, boot included (default 20 minutes).
	Timeout time.Duration
	// BootTimeout bounds each VM's boot and setup, up to the start of its
	// command (default 3 minutes). A VM over it is taken for a hung boot:
	// Run boots the run afresh, as after a boot crash.
	BootTimeout time.Duration
	// CPUs and MemMiB size each VM (defaults 2, or 1 with ICount, and
	// 2048).
	CPUs   int
	MemMiB int
	// Verbose streams the boot console to Log and narrates preparation.
	Verbose bool
	// Argv is the command to run; Dir its working directory and Env its
	// environment (the guest adds the RPMA_TEST_* variables above).
	Argv []string
	Dir  string
	Env  []string
	// TmpDir is shared read-write with the guest at the same path
	// (default: os.TempDir()).
	TmpDir string
	// Stdout and Stderr receive the command's output (never kernel
	// messages). Log receives the harness's own diagnostics.
	Stdout, Stderr, Log io.Writer
	// Nodes is the number of VMs: 1 (rxe0 on a dummy netdev) or 2 (two VMs
	// on one virtual wire, rxe0 on each one's NIC; node 0 is the server
	// side at 192.0.2.1, node 1 the client side at 192.0.2.2).
	Nodes int
	// Argv1 is node 1's command when Nodes is 2 (default: Argv).
	Argv1 []string
	// NetEm, with two nodes, is applied with tc netem to each node's NIC,
	// e.g. "delay 5ms" or "loss 1%".
	NetEm string
	// PMem gives node 0 an emulated NVDIMM.
	PMem PMem
	// ICount runs each VM under qemu's instruction counting (-icount
	// shift=0,sleep=off): the guest's clocks advance 1 ns per guest
	// instruction executed, not with the host's time, so a timing in the
	// guest counts instructions (user and kernel, every thread) and does
	// not move with host load. TCG then runs on one host thread, and the
	// VM has one vCPU: with two, 6.1 hangs bringing up the second one.
	// For benchmarks that compare counts (doc/performance.md, "What it
	// was measured on"); the guest runs slower, on one host CPU.
	ICount bool
	// Userspace runs the command in another Debian release's userspace
	// (one of Userspaces, e.g. "debian13"), built once and cached; ""
	// runs it in the host's.
	Userspace string
}

func (c *Config) setDefaults() {
	if c.Kernel == "" {
		c.Kernel = DefaultKernel
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BootTimeout <= 0 {
		c.BootTimeout = DefaultBootTimeout
	}
	if c.CPUs <= 0 {
		c.CPUs = DefaultCPUs
		if c.ICount {
			c.CPUs = 1
		}
	}
	if c.MemMiB <= 0 {
		c.MemMiB = DefaultMemMiB
	}
	if c.Nodes <= 0 {
		c.Nodes = 1
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	if c.Log == nil {
		c.Log = c.Stderr
	}
	if c.PMem.Size > 0 && c.PMem.Mode == "" {
		c.PMem.Mode = "devdax"
	}
}
