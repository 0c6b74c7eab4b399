// Command schedtable reads the guest scheduler traces of
// scripts/bench-sched.sh and prints one Markdown row per trace
// (bench.AnalyzeSched): the program's posts, threads and hops between
// threads, each role's share of vCPU time, and where rxe's kernel workers
// were woken and how long they waited to run.
//
//	schedtable COMM FILE [COMM FILE ...]
//	schedtable -timing DIR
//
// COMM is the start of the traced program's thread names (conn.test,
// rpma_lat); the row is named after FILE. With -timing it prints the
// untraced Write64 comparison of DIR instead (bench.WriteSchedTiming).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gorpma/rpma/internal/bench"
)

func main() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "-timing" {
		if err := bench.WriteSchedTiming(os.Stdout, args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "schedtable:", err)
			os.Exit(1)
		}
		return
	}
	if len(args) == 0 || len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: schedtable COMM FILE [COMM FILE ...] | schedtable -timing DIR")
		os.Exit(2)
	}
	var names []string
	var stats []bench.SchedStats
	status := 0
	for i := 0; i < len(args); i += 2 {
		comm, path := args[i], args[i+1]
		s, err := analyze(comm, path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "schedtable: %s: %v\n", path, err)
			status = 1
			continue
		}
		names = append(names, strings.TrimSuffix(filepath.Base(path), ".txt"))
		stats = append(stats, s)
	}
	bench.WriteSched(os.Stdout, names, stats)
	os.Exit(status)
}

func analyze(comm, path string) (bench.SchedStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return bench.SchedStats{}, err
	}
	defer f.Close()
	evs, err := bench.ParseTrace(f)
	if err != nil {
		return bench.SchedStats{}, err
	}
	return bench.AnalyzeSched(evs, comm)
}
