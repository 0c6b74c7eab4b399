package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a failed call, a failed -check, a timeout
	exitUsage   = 2 // a bad flag or value
)

// run is rpmaperf with args, writing to stdout and stderr; it returns the
// exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpmaperf: %v (rpmaperf -h for usage)\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cfg.server {
		err = runServer(ctx, cfg, stdout, stderr)
	} else {
		err = runClient(ctx, cfg, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpmaperf: %v\n", err)
		return exitFailure
	}
	return exitOK
}
