package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Limits of the configuration.
const (
	// maxLanes bounds the operations one connection keeps in flight
	// (goroutines × depth): the server sizes every connection's queues
	// for it before it knows what the client will do.
	maxLanes = 256
	// maxSize bounds a message size, and maxRegion the memory one
	// connection needs on either side.
	maxSize   = 1 << 30
	maxRegion = 1 << 30
	// minTimeout is conn.MinPeerTimeout: -timeout is each connection's
	// peer timeout too.
	minTimeout = 100 * time.Millisecond
)

// mode says how the client waits for its completions.
type mode string

const (
	modeBusy  mode = "busy"  // post, then poll cq.CQ.GetWC in a loop
	modeEvent mode = "event" // the per-operation waiting calls (conn.Conn.*Wait)
)

// config is the parsed command line.
type config struct {
	server     bool
	addr       string
	port       string
	forever    bool // server: keep serving after the client leaves
	directPMem bool // server: declare direct write to persistent memory
	pmemPath   string

	ops        []op
	sizes      []int
	depth      int
	iters      int
	duration   time.Duration
	goroutines int
	conns      int
	mode       mode
	json       bool
	stats      bool
	check      bool
	timeout    time.Duration
}

// lanes is the number of operations in flight on one connection.
func (c *config) lanes() int { return c.goroutines * c.depth }

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// newFlagSet declares every flag of rpmaperf into c.
func newFlagSet(c *config, ops, sizes *string) *flag.FlagSet {
	fs := flag.NewFlagSet("rpmaperf", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by parseArgs, in one line
	fs.BoolVar(&c.server, "server", false, "run the server side (default: the client)")
	fs.StringVar(&c.addr, "addr", "", "server: the address to listen at; client: the server's address (required)")
	fs.StringVar(&c.port, "port", "7204", "the server's port (server: 0 picks a free one, printed)")
	fs.BoolVar(&c.forever, "forever", false, "server: keep serving clients after the first client leaves")
	fs.BoolVar(&c.directPMem, "direct-pmem", true, "server: declare direct write to persistent memory, so that flush-persistent is allowed")
	fs.StringVar(&c.pmemPath, "pmem", "", "server: map the region from this file or Device DAX (default: DRAM)")
	fs.StringVar(ops, "op", "write", "operations: one, a comma list, or all ("+strings.Join(opNames(), ", ")+")")
	fs.StringVar(sizes, "size", "64", "message sizes in bytes, a comma list; K, M and G suffixes are KiB, MiB, GiB (atomics are 8 bytes)")
	fs.IntVar(&c.depth, "depth", 1, "operations in flight per goroutine (1 measures latency)")
	fs.IntVar(&c.iters, "iters", 1000, "operations per goroutine and connection, for each operation and size")
	fs.DurationVar(&c.duration, "duration", 0, "run each operation and size for this long instead of -iters")
	fs.IntVar(&c.goroutines, "goroutines", 1, "goroutines per connection, each with its own operations (-mode event)")
	fs.IntVar(&c.conns, "conns", 1, "connections")
	fs.StringVar((*string)(&c.mode), "mode", string(modeBusy), "busy (post and poll the CQ) or event (the per-operation waiting calls)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object per result instead of the table")
	fs.BoolVar(&c.check, "check", false, "verify the data each operation moved")
	fs.BoolVar(&c.stats, "stats", false, "at the end, print each connection's counters (conn.Conn.Stats) as a line \"stats conn=I {json}\"")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "bound of every wait, and each connection's peer timeout")
	return fs
}

// parseArgs parses and validates the command line. flag.ErrHelp asks for
// the usage; a *usageError is a bad flag or value.
func parseArgs(args []string) (*config, error) {
	c := &config{}
	var ops, sizes string
	fs := newFlagSet(c, &ops, &sizes)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if c.ops, err = parseOps(ops); err != nil {
		return nil, err
	}
	if c.sizes, err = parseSizes(sizes); err != nil {
		return nil, err
	}
	if set["iters"] && set["duration"] {
		return nil, usagef("-iters and -duration exclude each other")
	}
	return c, c.validate()
}

// validate checks the values of c, beyond their syntax.
func (c *config) validate() error {
	switch {
	case c.addr == "":
		return usagef("-addr is required")
	case !validPort(c.port, c.server):
		return usagef("-port %q: want a port number", c.port)
	case c.timeout < minTimeout:
		return usagef("-timeout %v: want at least %v", c.timeout, minTimeout)
	}
	if c.server {
		return nil
	}
	switch {
	case c.depth < 1:
		return usagef("-depth %d: want at least 1", c.depth)
	case c.iters < 1:
		return usagef("-iters %d: want at least 1", c.iters)
	case c.duration < 0:
		return usagef("-duration %v: want a positive duration", c.duration)
	case c.goroutines < 1:
		return usagef("-goroutines %d: want at least 1", c.goroutines)
	case c.conns < 1 || c.conns > 1024:
		return usagef("-conns %d: want 1 to 1024", c.conns)
	case c.mode != modeBusy && c.mode != modeEvent:
		return usagef("-mode %q: want busy or event", c.mode)
	case c.mode == modeBusy && c.goroutines > 1:
		return usagef("-goroutines %d needs -mode event (busy mode polls each connection from one goroutine; use -conns)", c.goroutines)
	case c.lanes() > maxLanes:
		return usagef("-goroutines × -depth is %d: want at most %d", c.lanes(), maxLanes)
	}
	if n := newLayout(c.lanes(), c.maxSize()).size; n > maxRegion {
		return usagef("-size %d with %d operations in flight needs %d bytes per connection: want at most %d", c.maxSize(), c.lanes(), n, maxRegion)
	}
	return nil
}

// validPort reports whether p is a port number (0 only for a server).
func validPort(p string, server bool) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n <= 65535 && (n > 0 || n == 0 && server)
}

// maxSize is the largest message any operation of c moves.
func (c *config) maxSize() int {
	m := atomicSize
	for _, o := range c.ops {
		if o.atomic() {
			continue
		}
		for _, s := range c.sizes {
			m = max(m, s)
		}
	}
	return m
}

// hasSend reports whether c sends messages (the server then receives).
func (c *config) hasSend() bool {
	for _, o := range c.ops {
		if o == opSend {
			return true
		}
	}
	return false
}

// parseOps parses -op: names, a comma list, or all.
func parseOps(s string) ([]op, error) {
	if s == "all" {
		return allOps(), nil
	}
	var ops []op
	seen := map[op]bool{}
	for _, name := range strings.Split(s, ",") {
		o, ok := opByName(strings.TrimSpace(name))
		if !ok {
			return nil, usagef("-op: unknown operation %q (want all or %s)", name, strings.Join(opNames(), ", "))
		}
		if !seen[o] {
			seen[o] = true
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// parseSizes parses -size: a comma list of sizes with optional K, M, G.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := parseSize(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			sizes = append(sizes, n)
		}
	}
	return sizes, nil
}

func parseSize(orig string) (int, error) {
	f, mult := orig, 1
	if f != "" {
		switch f[len(f)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
	}
	if mult > 1 {
		f = f[:len(f)-1]
	}
	n, err := strconv.Atoi(f)
	if err != nil || n < 1 || n > maxSize/mult {
		return 0, usagef("-size %q: want a size from 1 to %d bytes", orig, maxSize)
	}
	return n * mult, nil
}

// usage writes the full help of -h.
func usage(w io.Writer) {
	c := &config{}
	var ops, sizes string
	fs := newFlagSet(c, &ops, &sizes)
	fs.SetOutput(w)
	fmt.Fprint(w, `Usage:
  rpmaperf -server -addr IP [-port P] [-forever] [-direct-pmem=false] [-pmem PATH]
  rpmaperf -addr IP [-port P] -op OPS [-size SIZES] [-depth D] [-iters N | -duration T]
           [-goroutines G] [-conns C] [-mode busy|event] [-json] [-check] [-stats] [-timeout T]

Operations:
`)
	for _, o := range allOps() {
		fmt.Fprintf(w, "  %-24s %s\n", o, o.help())
	}
	fmt.Fprint(w, "\nFlags:\n")
	fs.PrintDefaults()
}
