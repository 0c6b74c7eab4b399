// Command demo runs every bundled example where an RDMA device is (inside
// the rxevm VM, or on a host with an active device), shows each one's
// output, checks that what each server read or received equals what its
// client sent, numbers each (n/N) with its time, and ends with
// `examples: N passed, M failed`.
//
//	demo -bin DIR [-addr ADDR] [-port PORT] [-pmem PATH]
//
// ADDR defaults to $RPMA_TEST_IP, PATH to $RPMA_TEST_PMEM.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gorpma/rpma/examples/internal/catalog"
)

func main() {
	env := catalog.Env{Out: os.Stdout}
	flag.StringVar(&env.Dir, "bin", "bin/examples", "directory of the built examples")
	flag.StringVar(&env.Addr, "addr", os.Getenv("RPMA_TEST_IP"), "RDMA address for servers and clients")
	flag.IntVar(&env.Port, "port", 7204, "first port (each example gets its own)")
	flag.StringVar(&env.PMem, "pmem", os.Getenv("RPMA_TEST_PMEM"), "persistent memory path (empty: DRAM)")
	flag.StringVar(&env.PMemMode, "pmem-mode", os.Getenv("RPMA_TEST_PMEM_MODE"), "devdax or fsdax")
	flag.BoolVar(&env.ODP, "odp", false, "the device has on-demand paging (FsDAX memory can be registered)")
	flag.Parse()
	if env.Addr == "" {
		fmt.Fprintln(os.Stderr, "demo: no address: give -addr or run inside rxevm")
		os.Exit(2)
	}
	passed, failed := 0, 0
	all := catalog.All()
	for i, e := range all {
		n := fmt.Sprintf("%d/%d", i+1, len(all))
		fmt.Printf("=== %s %s\n", n, e.Name)
		if !e.Available(&env) {
			fmt.Printf("--- FAIL %s %s: not built\n", n, e.Name)
			failed++
			continue
		}
		start := time.Now()
		r := e.Run(&env, i)
		took := time.Since(start).Seconds()
		if r.Err != nil {
			fmt.Printf("--- FAIL %s %s (%.1fs): %v\n", n, e.Name, took, r.Err)
			failed++
			continue
		}
		fmt.Printf("--- ok   %s %s (%.1fs)\n", n, e.Name, took)
		passed++
	}
	fmt.Printf("examples: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
