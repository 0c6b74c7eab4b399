//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gorpma/rpma/internal/vm"
)

func main() {
	if vm.IsGuestAgent(os.Args) {
		vm.GuestMain(os.Args[2])
		return
	}
	os.Exit(hostMain())
}

func hostMain() int {
	fs := flag.NewFlagSet("rxevm", flag.ContinueOnError)
	var cfg vm.Config
	fs.StringVar(&cfg.Kernel, "kernel", vm.DefaultKernel, "guest kernel series (6.12, 6.1) or package name")
	fs.DurationVar(&cfg.Timeout, "timeout", vm.DefaultTimeout, "kill the VM after this long")
	fs.DurationVar(&cfg.BootTimeout, "boot-timeout", vm.DefaultBootTimeout, "boot afresh a VM that has not started its command after this long")
	fs.IntVar(&cfg.CPUs, "cpus", 0, fmt.Sprintf("virtual CPUs (default %d; 1 with -icount)", vm.DefaultCPUs))
	fs.BoolVar(&cfg.ICount, "icount", false, "count instructions: the guest's clocks advance 1 ns per instruction executed, on one vCPU (for benchmarks that compare counts)")
	fs.IntVar(&cfg.MemMiB, "mem", vm.DefaultMemMiB, "memory in MiB")
	fs.IntVar(&cfg.Nodes, "nodes", 1, "number of VMs: 1, or 2 on one virtual wire")
	fs.StringVar(&cfg.NetEm, "netem", "", "with -nodes 2: tc netem parameters for the wire, e.g. \"delay 5ms\"")
	pmem := fs.String("pmem", "", "emulated NVDIMM on node 0: SIZE[,FILE], e.g. 256M")
	fs.StringVar(&cfg.PMem.Mode, "pmem-mode", "devdax", "devdax (/dev/dax0.0) or fsdax (ext4 -o dax at "+vm.FsDAXMount+")")
	fs.StringVar(&cfg.Userspace, "userspace", "", "run the command in another Debian userspace, built once with debootstrap and cached: "+strings.Join(vm.Userspaces(), ", ")+" (default: the host's)")
	printInclude := fs.Bool("print-include", false, "with -userspace: build it if needed, print the directory of its rdma-core headers (for CGO_CFLAGS=-I...) and exit")
	fs.BoolVar(&cfg.Verbose, "v", false, "show the boot console and preparation steps")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rxevm [flags] -- CMD [ARGS...] [:: NODE1-CMD [ARGS...]]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *pmem != "" {
		p, err := vm.ParsePMem(*pmem)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rxevm:", err)
			return 2
		}
		p.Mode = cfg.PMem.Mode
		cfg.PMem = p
	}
	if *printInclude {
		return printUserspaceInclude(cfg.Userspace)
	}
	cfg.Argv = fs.Args()
	for i, a := range cfg.Argv {
		if a == "::" {
			cfg.Argv, cfg.Argv1 = cfg.Argv[:i], cfg.Argv[i+1:]
			break
		}
	}
	if len(cfg.Argv) == 0 || (cfg.Argv1 != nil && (cfg.Nodes != 2 || len(cfg.Argv1) == 0)) {
		fs.Usage()
		return 2
	}
	cfg.Env = os.Environ()
	cfg.Stdout, cfg.Stderr, cfg.Log = os.Stdout, os.Stderr, os.Stderr

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, vm.PowerLossSignal)
	code, err := vm.Run(context.Background(), cfg, sigs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}

// printUserspaceInclude prints where the userspace's rdma-core headers are.
func printUserspaceInclude(name string) int {
	if name == "" {
		fmt.Fprintln(os.Stderr, "rxevm: -print-include needs -userspace")
		return 2
	}
	dir, err := vm.CacheDir()
	if err == nil {
		var us *vm.UserspaceRoot
		if us, err = vm.EnsureUserspace(dir, name, os.Stderr); err == nil {
			fmt.Println(us.Include)
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "rxevm:", err)
	return 1
}
