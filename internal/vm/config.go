//go:build linux

package vm

import (
	"io"
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
	DefaultCPUs    = 2
	DefaultMemMiB  = 2048
)

// TestIP is the address of rxe0's netdev in a single-node VM.
const TestIP = "192.0.2.1"

// Environment variables set for the command inside the VM.
const (
	EnvTestIP      = "RPMA_TEST_IP"
	EnvRequireRXE  = "RPMA_TEST_REQUIRE_RXE"
	EnvTestKernel  = "RPMA_TEST_KERNEL"
	EnvInsideVM    = "RXEVM_GUEST"
	guestAgentFlag = "--rxevm-guest-agent"
)

// Config describes one run. The zero value of each field means its default.
type Config struct {
	// Kernel selects the guest kernel: a series ("6.12", the default, picks
	// the newest linux-image-6.12.N+deb12-amd64-unsigned; "6.1" picks the
	// kernel that linux-image-amd64 depends on) or a full package name.
	Kernel string
	// Timeout bounds the whole run, boot included (default 20 minutes).
	Timeout time.Duration
	// CPUs and MemMiB size the VM (defaults 2 and 2048).
	CPUs   int
	MemMiB int
	// Verbose streams the boot console to Stderr and narrates preparation.
	Verbose bool
	// Argv is the command to run; Dir its working directory and Env its
	// environment (the guest adds RPMA_TEST_* variables).
	Argv []string
	Dir  string
	Env  []string
	// TmpDir is shared read-write with the guest at the same path
	// (default: os.TempDir()).
	TmpDir string
	// Stdout and Stderr receive the command's output (never kernel
	// messages). Log receives the harness's own diagnostics.
	Stdout, Stderr, Log io.Writer
	// Nodes is the number of VMs. Only 1 is implemented; 2 (two VMs on one
	// virtual wire) is reserved for the persistent-memory tests.
	Nodes int
}

func (c *Config) setDefaults() {
	if c.Kernel == "" {
		c.Kernel = DefaultKernel
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CPUs <= 0 {
		c.CPUs = DefaultCPUs
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
}
