//go:build linux

package examples_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/examples/internal/catalog"
	"github.com/gorpma/rpma/internal/cbuild"
	"github.com/gorpma/rpma/internal/rdmatest"
)

// The C side of the interop test: programs on C librpma (Debian's
// librpma-dev 1.2.0) that follow librpma's examples' wire protocols
// (examples/internal/common/EXAMPLES.md), in testdata/librpma as
// NAME-server.c and NAME-client.c.
const interopCDir = "testdata/librpma"

// interopCExtra: what some examples' C programs are built with besides
// their own source, librpma and libibverbs. 09 packs its flush request and
// response with protobuf-c, as librpma's example does, from the code that
// protoc-c generated from GPSPM_flush.proto (committed beside it: building
// needs only libprotobuf-c-dev), so that the Go encoder is shown to speak
// protobuf-c's bytes.
var interopCExtra = map[string]struct{ srcs, libs []string }{
	"09-flush-to-persistent-GPSPM": {srcs: []string{"GPSPM_flush.pb-c.c"}, libs: []string{"-lprotobuf-c"}},
}

// interopCHeaders are the headers the C programs need: librpma-dev's,
// libibverbs-dev's (librpma.h includes infiniband/verbs.h) and
// libprotobuf-c-dev's (09).
var interopCHeaders = map[string]string{
	"librpma-dev":       "/usr/include/librpma.h",
	"libibverbs-dev":    "/usr/include/infiniband/verbs.h",
	"libprotobuf-c-dev": "/usr/include/protobuf-c/protobuf-c.h",
}

// interopExamples are the examples with C programs in interopCDir (a pair,
// or one side: interopOnly).
var interopExamples = []string{
	"02-read-to-volatile",
	"05-flush-to-persistent",
	"07-atomic-write",
	"08-messages-ping-pong",
	"09-flush-to-persistent-GPSPM",
	"10-send-with-imm",
	"11-write-with-imm",
	"12-receive-completion-queue",
	"13-messages-ping-pong-with-srq",
	"grant",
}

// interopOnly limits an example to some pairings: grant has no C server
// (librpma has no grants), only a C client of a Go server's grant.
var interopOnly = map[string][]string{
	"grant": {"go-server+c-client"},
}

// interopPairings: who plays which side. The C-C pairing is the control:
// it shows that the C programs themselves follow the protocol, so that a
// failure of a mixed pairing points at the Go side.
var interopPairings = []struct {
	name           string
	server, client string // "go" or "c"
}{
	{"go-server+c-client", "go", "c"},
	{"c-server+go-client", "c", "go"},
	{"c-server+c-client", "c", "c"},
}

// interopPortBase: the ports of this test (TestIntegrationExamples uses
// 7304 onwards). Each run gets its own port.
const interopPortBase = 7400

const (
	// interopRunTimeout bounds one pairing: both processes are killed
	// when it passes. Generous: under TCG a Go binary takes 1-2 s to
	// start, and another test suite may share the machine.
	interopRunTimeout = 2 * time.Minute
	// interopListenTimeout bounds the wait for the server to listen.
	interopListenTimeout = 60 * time.Second
	// interopBuildTimeout bounds compiling the C programs.
	interopBuildTimeout = 5 * time.Minute
	// interopServerGrace: how long a server may go on after its client
	// ended; interopFailGrace: after its client failed (it may see the
	// connection close, or wait for ever, as librpma's servers do).
	interopServerGrace = 60 * time.Second
	interopFailGrace   = 15 * time.Second
)

// TestIntegrationInteropLibrpma checks that librpma's examples' protocols
// work across languages: for each example with a C pair (built here
// against C librpma), it runs our Go server with the C client and the C
// server with our Go client (and the C pair, as a control) on the VM's rxe
// device, and checks what each server ended up with against what its client
// sent, with the checks of the examples' catalog plus the example's own
// (the peer configuration's descriptor, the log's initial used value).
func TestIntegrationInteropLibrpma(t *testing.T) {
	// The C programs first: on a host without the device, the test builds
	// them (into the cache of C builds, internal/cbuild) and then skips.
	cBins := buildInteropC(t)
	ip := rdmatest.IP(t)
	goDir := goExamplesDir(t)
	for _, name := range interopExamples {
		for _, side := range []string{"server", "client"} {
			_, err := os.Stat(filepath.Join(goDir, name+"-"+side))
			require.NoError(t, err, "%s-%s is not built: run scripts/build-examples.sh", name, side)
		}
	}
	t.Logf("kernel %q, address %s", rdmatest.Kernel(), ip)

	for i, name := range interopExamples {
		e := catalogExample(t, name)
		for j, p := range interopPairings {
			if only, ok := interopOnly[name]; ok && !slices.Contains(only, p.name) {
				continue
			}
			t.Run(name+"/"+p.name, func(t *testing.T) {
				bin := func(lang, side string) string {
					if lang == "c" {
						return cBins[name+"-"+side]
					}
					return filepath.Join(goDir, name+"-"+side)
				}
				port := interopPortBase + i*len(interopPairings) + j
				runCatalogPair(t, e, ip, port, bin(p.server, "server"), bin(p.client, "client"))
			})
		}
	}
}

// goExamplesDir returns the directory of the Go examples' binaries:
// RPMA_EXAMPLES_BIN, else bin/examples (scripts/build-examples.sh).
func goExamplesDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RPMA_EXAMPLES_BIN")
	if dir == "" {
		dir = "../bin/examples"
	}
	dir, err := filepath.Abs(dir)
	require.NoError(t, err)
	return dir
}

// runCatalogPair runs example e's server program srv and client program
// cli on ip:port with the catalog's arguments, and checks the outcome with
// the catalog's check and the example's own (interopChecks).
func runCatalogPair(t *testing.T, e catalog.Example, ip string, port int, srv, cli string) {
	t.Helper()
	start := time.Now()
	r := runInteropPair(t, ip, port,
		append([]string{srv, ip, strconv.Itoa(port)}, e.Server...),
		append([]string{cli, ip, strconv.Itoa(port)}, e.Client...))
	t.Logf("%s: %v", t.Name(), time.Since(start).Round(time.Millisecond))
	require.NoError(t, r.err)
	require.NoError(t, e.Check(r.server, r.client), "the catalog's check")
	if check := interopChecks[e.Name]; check != nil {
		require.NoError(t, check(r.server, r.client))
	}
}

// interopChecks are checks of some examples beyond the catalog's, for the
// DRAM-only runs of this test (08: the catalog's check says it all).
var interopChecks = map[string]func(server, client string) error{
	// Both servers declare no direct write to PMem in the peer
	// configuration's descriptor: the client must have decoded it so, and
	// the value must have crossed untouched.
	"05-flush-to-persistent": func(server, client string) error {
		if want := "New value: Hello world!\n"; server != want {
			return fmt.Errorf("server printed %q, want %q", server, want)
		}
		if !strings.Contains(client, "RPMA_FLUSH_TYPE_PERSISTENT is NOT supported, RPMA_FLUSH_TYPE_VISIBILITY is used instead\n") {
			return errors.New("client did not decode the server's peer configuration as no direct write to PMem")
		}
		return nil
	},
	// A fresh log in DRAM: used starts right after the header.
	"07-atomic-write": func(server, client string) error {
		if !strings.Contains(client, "used value: 16\n") {
			return fmt.Errorf("client did not read used = 16 from a fresh log: %q", client)
		}
		return nil
	},
	// Both servers advertise DRAM at data_offset 0: the request the server
	// decoded (protobuf-c's or Go's) must name exactly that range and the
	// client's op_context, and the value must have crossed untouched (the
	// client's check of the response's op_context is its exit status).
	"09-flush-to-persistent-GPSPM": func(server, client string) error {
		want := "Flush request received: {offset: 0x0, length: 0x400, op_context: 0xF01D}\n" +
			"New value: Hello world!\n"
		if server != want {
			return fmt.Errorf("server printed %q, want %q", server, want)
		}
		return nil
	},
}

// catalogExample returns the example of the catalog named name: its
// arguments and its check are those of TestIntegrationExamples.
func catalogExample(t *testing.T, name string) catalog.Example {
	t.Helper()
	for _, e := range catalog.All() {
		if e.Name == name {
			require.NotNil(t, e.Check, "%s has no check in the catalog", name)
			return e
		}
	}
	t.Fatalf("%s is not in the examples' catalog", name)
	return catalog.Example{}
}

// buildInteropC compiles the C programs of the examples names (all of
// interopExamples without names) into a temporary directory, or takes them
// from the cache of C builds, and returns their paths by name
// (NAME-server, NAME-client). Without cc, librpma-dev, libibverbs-dev or
// libprotobuf-c-dev it skips on a host, and fails in the VM.
func buildInteropC(t *testing.T, names ...string) map[string]string {
	t.Helper()
	cc := requireCC(t, "librpma-dev", "libibverbs-dev", "libprotobuf-c-dev")
	src, err := filepath.Abs(interopCDir)
	require.NoError(t, err)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), interopBuildTimeout)
	defer cancel()

	if len(names) == 0 {
		names = interopExamples
	}
	bins := map[string]string{}
	fromCache := 0
	errs := make([]error, 0, 2*len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, name := range names {
		for _, side := range []string{"server", "client"} {
			prog := name + "-" + side
			if _, err := os.Stat(filepath.Join(src, prog+".c")); errors.Is(err, fs.ErrNotExist) {
				continue // no C program of this side (interopOnly)
			}
			wg.Go(func() {
				extra := interopCExtra[name]
				srcs := append([]string{prog + ".c"}, extra.srcs...)
				bin, cached, err := compileC(ctx, cc, dir, prog, srcs, append([]string{"-lrpma", "-libverbs"}, extra.libs...))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				bins[prog] = bin
				if cached {
					fromCache++
				}
			})
		}
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	t.Logf("built %d C programs in %v (%d from the cache)", len(bins), time.Since(start).Round(time.Millisecond), fromCache)
	return bins
}

// compileC compiles the C files srcs of interopCDir into the program name
// with the warnings the test holds them to, linking libs, or takes it from
// the cache of C builds (internal/cbuild), and returns its path and
// whether it came from the cache.
func compileC(ctx context.Context, cc, dir, name string, srcs, libs []string) (bin string, cached bool, err error) {
	src, err := filepath.Abs(interopCDir)
	if err != nil {
		return "", false, err
	}
	return cbuild.Build(ctx, cc, cbuild.Program{
		Name: name, Dir: src, Srcs: srcs, Libs: libs,
		Args: []string{"-std=gnu11", "-O2", "-Wall", "-Werror", "-I", src},
	}, dir)
}

// requireCC returns the path of cc after checking that the Debian packages
// pkgs (keys of interopCHeaders) are installed, by their headers. Without
// them it skips on a host and fails in the VM (rdmatest.Required), naming
// the packages.
func requireCC(t *testing.T, pkgs ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	missing := []error{err}
	for _, p := range pkgs {
		h, ok := interopCHeaders[p]
		require.True(t, ok, "no header known for %s", p)
		if _, err := os.Stat(h); err != nil {
			missing = append(missing, fmt.Errorf("%s: %w", p, err))
		}
	}
	if err := errors.Join(missing...); err != nil {
		need := "cc (gcc), " + strings.Join(pkgs, ", ")
		if rdmatest.Required() {
			t.Fatalf("the test environment must have %s (scripts/setup.sh installs them): %v", need, err)
		}
		t.Skipf("needs %s (scripts/setup.sh installs them): %v", need, err)
	}
	return cc
}

// interopResult is the outcome of one pairing: both programs' stdout and
// the first error (a program failing, a timeout).
type interopResult struct {
	server, client string
	serverStderr   string // set by runInteropServerWith
	err            error
}

// interopProc is one running program.
type interopProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error // valid once done is closed
}

// startInterop starts argv in its own process group, killed (the whole
// group) when ctx ends.
func startInterop(ctx context.Context, argv []string) (*interopProc, error) {
	p := &interopProc{done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Cancel = func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
	p.cmd.WaitDelay = 10 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop kills p (if it still runs) and reaps it.
func (p *interopProc) stop() {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done // bounded by WaitDelay
	}
}

// runInteropPair runs the server srv, waits until it listens on ip:port,
// runs the client cli, then waits for the server to end. Every wait is
// bounded by interopRunTimeout; both processes are always killed and reaped.
func runInteropPair(t *testing.T, ip string, port int, srv, cli []string) (res interopResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), interopRunTimeout)
	defer cancel()

	t.Logf("server: %s", strings.Join(srv, " "))
	s, err := startInterop(ctx, srv)
	if err != nil {
		return interopResult{err: fmt.Errorf("server: %w", err)}
	}
	var c *interopProc
	defer func() {
		s.stop()
		if c != nil {
			c.stop()
		}
		res.server = s.stdout.String()
		t.Logf("server exit: %v\nstdout:\n%s\nstderr:\n%s", s.err, res.server, s.stderr.String())
		if c != nil {
			res.client = c.stdout.String()
			t.Logf("client exit: %v\nstdout:\n%s\nstderr:\n%s", c.err, res.client, c.stderr.String())
		}
		if ctx.Err() != nil {
			res.err = errors.Join(res.err, fmt.Errorf("timed out after %v (processes killed)", interopRunTimeout))
		}
	}()

	if err := waitInteropListening(ctx, ip, port, s); err != nil {
		return interopResult{err: err}
	}
	t.Logf("client: %s", strings.Join(cli, " "))
	if c, err = startInterop(ctx, cli); err != nil {
		return interopResult{err: fmt.Errorf("client: %w", err)}
	}
	clientOK := false
	select {
	case <-c.done:
		clientOK = c.err == nil
	case <-ctx.Done():
	}
	// a server may wait for ever: give it a while
	grace := interopFailGrace
	if clientOK {
		grace = interopServerGrace
	}
	serverEnded := true
	select {
	case <-s.done:
	case <-ctx.Done():
		serverEnded = false
	case <-time.After(grace):
		serverEnded = false
	}
	s.stop()
	c.stop()
	if c.err != nil {
		res.err = fmt.Errorf("client: %w", c.err)
	}
	if !serverEnded {
		res.err = errors.Join(res.err, errors.New("server: still running after its client ended; killed"))
	} else if s.err != nil {
		res.err = errors.Join(res.err, fmt.Errorf("server: %w", s.err))
	}
	return res
}

// waitInteropListening waits until the server s listens on ip:port through
// rdma_cm (as `rdma resource show cm_id` reports), and fails if s ends
// first or interopListenTimeout passes. Without the rdma tool (iproute2)
// it waits 2 s instead.
func waitInteropListening(ctx context.Context, ip string, port int, s *interopProc) error {
	ctx, cancel := context.WithTimeout(ctx, interopListenTimeout)
	defer cancel()
	rdma, err := exec.LookPath("rdma")
	if err != nil {
		select {
		case <-s.done:
			return fmt.Errorf("server ended before its client started: %v", s.err)
		case <-time.After(2 * time.Second):
			return nil
		}
	}
	want := fmt.Sprintf("%s:%d ", ip, port)
	for {
		out, err := exec.CommandContext(ctx, rdma, "resource", "show", "cm_id").Output()
		if err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l+" ", want) && strings.Contains(l, "LISTEN") {
					return nil
				}
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("server ended before listening on %s:%d: %v", ip, port, s.err)
		case <-ctx.Done():
			return fmt.Errorf("server not listening on %s:%d after %v (rdma resource show cm_id: %v)",
				ip, port, interopListenTimeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
