// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/log/log-example.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

// Command log is the Go port of librpma's examples/log (log-example.c and
// log-worker.c): it shows how to control the library's logging. First
// both thresholds go to DEBUG, so every message the worker logs reaches
// the default log function, which writes it to stderr (through the zap
// logger the example installs with rpma.SetLogger: stderr plus, where
// there is one, the system log). Then a custom log function
// (rpma.SetLogFunction) takes over and writes the messages to stderr in
// its own format; finally the default function is restored.
//
//	log
//
// There is nothing on the wire, so it needs no RDMA device. It exits
// non-zero if the custom function did not get every message.
package main

import (
	"fmt"
	"os"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gorpma/rpma/rpma"
)

// custom counts the messages userLogFunction handled.
var custom atomic.Int32

// userLogFunction is the custom log function: librpma's example's, with a
// Go signature (the message comes formatted).
func userLogFunction(level rpma.LogLevel, file string, line int, fn string, msg string) {
	if file != "" && fn == "" {
		return
	}
	custom.Add(1)
	fmt.Fprint(os.Stderr, "Custom log handling: \n")
	if file != "" {
		fmt.Fprintf(os.Stderr, "%s %4d %s:\n", file, line, fn)
	}
	fmt.Fprintf(os.Stderr, "level: %d ", level)
	fmt.Fprint(os.Stderr, msg)
	if file != "" {
		fmt.Fprint(os.Stderr, "\n")
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(255)
	}
}

func run() error {
	// log messages to stderr and the system log
	fmt.Print("Let's write messages to stderr and syslog\n")
	logger, closeLogger := stderrAndSyslog()
	defer closeLogger()
	rpma.SetLogger(logger)
	if err := rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogDebug); err != nil {
		return fmt.Errorf("rpma.SetLogThreshold: %w", err)
	}
	if err := rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogDebug); err != nil {
		return fmt.Errorf("rpma.SetLogThreshold: %w", err)
	}
	for _, t := range []rpma.LogThreshold{rpma.LogThresholdPrimary, rpma.LogThresholdAux} {
		if l, err := rpma.LogThresholdOf(t); err != nil || l != rpma.LogDebug {
			return fmt.Errorf("rpma.LogThresholdOf(%s) = %s, %v; want %s", t, l, err, rpma.LogDebug)
		}
	}
	logWorkerIsDoingSomething()
	_ = logger.Sync()
	fmt.Print("Use: \n$ sudo tail -n 60 /var/log/syslog | grep rpma\nto see messages in the syslog.")

	// log messages only through a custom function
	rpma.SetLogFunction(userLogFunction)
	fmt.Print("Let's use custom log function to write messages to stderr\nNo message should be written to syslog\n")
	n := logWorkerIsDoingSomething()
	rpma.SetLogFunction(nil) // the default function again
	rpma.SetLogger(nil)

	if got := custom.Load(); got != int32(n) {
		return fmt.Errorf("the custom log function got %d messages, the worker logged %d", got, n)
	}
	return nil
}

// stderrAndSyslog returns a zap logger writing to stderr and, if the system
// log can be reached, to it too (tagged "rpma"), and what closes it.
func stderrAndSyslog() (*zap.Logger, func()) {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	cores := []zapcore.Core{zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zapcore.DebugLevel)}
	w, err := openSyslog()
	if err != nil {
		fmt.Fprintf(os.Stderr, "no system log (%v): the messages go to stderr only\n", err)
	} else {
		cores = append(cores, zapcore.NewCore(enc.Clone(), zapcore.AddSync(w), zapcore.DebugLevel))
	}
	return zap.New(zapcore.NewTee(cores...)).Named("rpma"), func() {
		if w != nil {
			w.Close()
		}
	}
}
