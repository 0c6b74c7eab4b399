//go:build linux

package vm

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// qemuBinary is the emulator; Debian's qemu-system-x86 installs it.
const qemuBinary = "qemu-system-x86_64"

// streams are the host ends of the VM's character devices, each a
// socketpair whose other end qemu inherits.
type streams struct {
	host  []*os.File // our ends: console, stdout, stderr, ctl
	child []*os.File // qemu's ends, passed as fds 3, 4, 5, 6
}

const (
	streamConsole = iota
	streamStdout
	streamStderr
	streamCtl
	numStreams
)

func newStreams() (*streams, error) {
	s := &streams{}
	for i := 0; i < numStreams; i++ {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			s.closeAll()
			return nil, fmt.Errorf("socketpair: %w", err)
		}
		s.host = append(s.host, os.NewFile(uintptr(fds[0]), "rxevm-host-"+strconv.Itoa(i)))
		s.child = append(s.child, os.NewFile(uintptr(fds[1]), "rxevm-qemu-"+strconv.Itoa(i)))
	}
	return s, nil
}

func (s *streams) closeChild() {
	for _, f := range s.child {
		f.Close()
	}
}

func (s *streams) closeAll() {
	s.closeChild()
	for _, f := range s.host {
		f.Close()
	}
}

// kernelCmdline is the guest kernel's command line. tsc=reliable gives
// every guest the TSC as its clock source, as on hardware. 6.12 takes it
// anyway; 6.1 rejects the TSC of qemu's "max" CPU under TCG ("TSCs
// unsynchronized": an AMD-vendor CPU without constant_tsc and more than
// one vCPU is assumed unsynchronized, without a measurement) and falls
// back to the HPET, where every clock read (clock_gettime, and so Go's
// scheduler, timers and time.Now) is a system call and an emulated device
// access: 1.0-1.4 µs a read against 0.09-0.13 µs for the TSC's vDSO read
// in the same guests (2026-12-03). TCG's TSC is one counter for all vCPUs,
// taken from the host's under a lock (qemu's cpu_get_ticks), so it is
// synchronized: a warp test (two threads on the two vCPUs reading the TSC
// and CLOCK_MONOTONIC in turn, 2 million reads) found no step back on 6.1
// or 6.12. The option also stops the clocksource watchdog, which could
// otherwise move a loaded 6.12 guest to the HPET mid-run.
// doc/notes/performance-lab-notes.md, "The guest's clock (2026-12-03)",
// has what it changes.
//
// softlockup_panic=1 turns a guest kernel that stopped scheduling a CPU
// for 20 s into a panic, so the VM exits (panic=-1, qemu's -no-reboot)
// instead of hanging until the run's timeout. CI saw such a guest once on
// 6.1 under TCG: migration/0 and cryptomgr_test each spinning on their
// vCPU, soft lockup reports every 28 s until the 20-minute timeout. A
// panic before the command started is retried like any boot crash (Run).
const kernelCmdline = "console=ttyS0 quiet panic=-1 rdinit=/init tsc=reliable softlockup_panic=1"

// qemuArgs builds the command line of one VM. Stream i is inherited as
// fd 3+i (exec.Cmd.ExtraFiles).
// usRoot, if not "", is a userspace root to export as a fourth 9p share.
func qemuArgs(cfg *Config, k *Kernel, initrd, runDir, usRoot string, n *Node) []string {
	fd := func(i int) string { return strconv.Itoa(3 + i) }
	machine, mem := "pc", strconv.Itoa(cfg.MemMiB)
	if n.PMem.Size > 0 {
		machine = "pc,nvdimm=on"
		mem += fmt.Sprintf(",slots=2,maxmem=%dM", cfg.MemMiB+int(n.PMem.Size>>20))
	}
	accel := "tcg,thread=multi"
	if cfg.ICount {
		accel = "tcg,thread=single" // -icount needs one TCG thread
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-machine", machine, "-accel", accel, "-cpu", "max",
		"-smp", strconv.Itoa(cfg.CPUs), "-m", mem,
		"-kernel", k.Image(), "-initrd", initrd,
		"-append", kernelCmdline,
		"-chardev", "socket,id=con,fd=" + fd(streamConsole), "-serial", "chardev:con",
		"-device", "virtio-serial-pci,id=vser",
		"-chardev", "socket,id=out,fd=" + fd(streamStdout),
		"-device", "virtserialport,bus=vser.0,chardev=out,name=" + portStdout,
		"-chardev", "socket,id=err,fd=" + fd(streamStderr),
		"-device", "virtserialport,bus=vser.0,chardev=err,name=" + portStderr,
		"-chardev", "socket,id=ctl,fd=" + fd(streamCtl),
		"-device", "virtserialport,bus=vser.0,chardev=ctl,name=" + portCtl,
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + cfg.TmpDir + ",mount_tag=hosttmp,security_model=none,multidevs=remap",
		"-virtfs", "local,path=" + runDir + ",mount_tag=rxevmctl,security_model=none",
	}
	if cfg.ICount {
		// shift=0: one instruction is 1 ns of guest time. sleep=off: an
		// idle guest's clock jumps to its next timer instead of following
		// the host's, so idle time is not host time either.
		args = append(args, "-icount", "shift=0,sleep=off")
	}
	if usRoot != "" {
		args = append(args, "-virtfs", "local,path="+usRoot+",mount_tag="+userspaceTag+",security_model=none,readonly=on,multidevs=remap")
	}
	if n.PMem.Size > 0 {
		args = append(args,
			"-object", fmt.Sprintf("memory-backend-file,id=pmem0,share=on,mem-path=%s,size=%d,align=2M", n.PMem.File, n.PMem.Size),
			"-device", "nvdimm,id=nvdimm0,memdev=pmem0")
	}
	if w := n.Wire; w != nil {
		// UDP socket netdev: each node sends to the other's port.
		args = append(args,
			"-netdev", fmt.Sprintf("socket,id=wire,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d", w.Ports[1-n.Index], w.Ports[n.Index]),
			"-device", fmt.Sprintf("virtio-net-pci,netdev=wire,mac=52:54:00:12:34:%02x", n.Index+1))
	} else {
		args = append(args, "-nic", "none")
	}
	return args
}
