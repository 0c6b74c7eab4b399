//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
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
	fs.IntVar(&cfg.CPUs, "cpus", vm.DefaultCPUs, "virtual CPUs")
	fs.IntVar(&cfg.MemMiB, "mem", vm.DefaultMemMiB, "memory in MiB")
	fs.IntVar(&cfg.Nodes, "nodes", 1, "number of VMs (only 1 is implemented)")
	fs.BoolVar(&cfg.Verbose, "v", false, "show the boot console and preparation steps")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rxevm [flags] -- CMD [ARGS...]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	cfg.Argv = fs.Args()
	if len(cfg.Argv) == 0 {
		fs.Usage()
		return 2
	}
	cfg.Env = os.Environ()
	cfg.Stdout, cfg.Stderr, cfg.Log = os.Stdout, os.Stderr, os.Stderr

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	code, err := vm.Run(context.Background(), cfg, sigs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}
