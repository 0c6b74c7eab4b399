// Package catalog lists the bundled examples and how to run and check
// each, for the two places that run them all: `make demo` (package demo,
// inside the VM or on an RDMA host) and the examples' integration test.
package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

var (
	registered []Example
	sortOnce   sync.Once
)

// register adds examples to the catalog; each examples_*.go file registers
// its own from an init function.
func register(e ...Example) { registered = append(registered, e...) }

// All returns every bundled example in the order make demo runs them: the
// setup checks (devinfo, rping) first, then the examples by name.
func All() []Example {
	sortOnce.Do(func() {
		sort.SliceStable(registered, func(i, j int) bool {
			bi, bj := isBase(registered[i].Name), isBase(registered[j].Name)
			if bi != bj {
				return bi
			}
			return !bi && registered[i].Name < registered[j].Name
		})
	})
	return registered
}

func isBase(name string) bool { return name == "devinfo" || name == "rping" }

// Example is one bundled example: a server/client pair, or one program.
type Example struct {
	Name string
	// Server and Client are the arguments after <addr> <port>. A pair has
	// both; a single program has only Client (and no <addr> <port> unless
	// Addr is set).
	Server, Client []string
	// Addr: a single program also gets <addr> <port>.
	Addr bool
	// Bin overrides the binaries' names: a pair's server and client (or a
	// single program) run as Bin[0] (and Bin[1]) from PATH instead of
	// <dir>/<name>-server and <dir>/<name>-client. Such a program gets no
	// positional <addr> <port>: "{addr}" and "{port}" in its arguments are
	// replaced instead.
	Bin []string
	// PMem: the server (and, where the example takes one, the client) gets
	// the persistent-memory path when there is one.
	PMem func(pmem string) (server, client []string)
	// Check says whether what the server read or received equals what the
	// client sent, from the two programs' stdout.
	Check func(server, client string) error
}

// fsdaxFails: in FsDAX mode on a device without on-demand paging, an
// example that registers persistent memory must fail, with the error that
// says ODP is needed.
func (e *Example) fsdaxFails(env *Env) bool {
	return e.PMem != nil && env.PMem != "" && env.PMemMode == "fsdax" && !env.ODP
}

// Env is where examples run.
type Env struct {
	// PMemMode is "devdax" or "fsdax" (RPMA_TEST_PMEM_MODE); ODP says the
	// device has on-demand paging, without which FsDAX memory cannot be
	// registered.
	PMemMode string
	ODP      bool
	Dir      string // the built binaries: <name>-server, <name>-client, <name>
	Addr     string // the RDMA address both sides use
	Port     int    // the first port; each example gets its own
	PMem     string // a persistent-memory path ("" for DRAM)
	Out      io.Writer
}

// Result is the outcome of one example.
type Result struct {
	Name           string
	Server, Client string // stdout
	Err            error
}

const runTimeout = 2 * time.Minute

func (e *Example) argv(env *Env, side string, port int) []string {
	var bin string
	switch {
	case len(e.Bin) == 2 && side == "server":
		bin = e.Bin[0]
	case len(e.Bin) == 2:
		bin = e.Bin[1]
	case len(e.Bin) == 1:
		bin = e.Bin[0]
	case e.Server == nil:
		bin = filepath.Join(env.Dir, e.Name)
	default:
		bin = filepath.Join(env.Dir, e.Name+"-"+side)
	}
	args := e.Client
	if side == "server" {
		args = e.Server
	}
	argv := []string{bin}
	if (e.Server != nil || e.Addr) && len(e.Bin) == 0 {
		argv = append(argv, env.Addr, fmt.Sprint(port))
	}
	r := strings.NewReplacer("{addr}", env.Addr, "{port}", fmt.Sprint(port))
	for _, a := range args {
		argv = append(argv, r.Replace(a))
	}
	if e.PMem != nil && env.PMem != "" {
		s, c := e.PMem(env.PMem)
		if side == "server" {
			argv = append(argv, s...)
		} else {
			argv = append(argv, c...)
		}
	}
	return argv
}

// prefixWriter prefixes each line written to w.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

// Write is safe for concurrent use (a program's stdout and stderr share
// one prefixWriter); mu also serialises the lines of several writers.
func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.buf = p.buf[i+1:]
	}
}

func start(ctx context.Context, argv []string, out, errOut *syncBuffer, show io.Writer) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = io.MultiWriter(out, show)
	cmd.Stderr = io.MultiWriter(errOut, show)
	return cmd, cmd.Start()
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitListening waits until something listens on addr:port through
// rdma_cm (as `rdma resource show cm_id` reports), or d passes, or exited
// is closed: the server process has ended, and nothing will listen. It
// returns false only in the last case.
func waitListening(addr string, port int, d time.Duration, exited <-chan struct{}) bool {
	want := fmt.Sprintf("%s:%d", addr, port)
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		out, err := exec.Command("rdma", "resource", "show", "cm_id").Output()
		if err != nil {
			// no rdma tool: fall back to a pause
			select {
			case <-exited:
				return false
			case <-time.After(time.Second):
				return true
			}
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, want) && strings.Contains(l, "LISTEN") {
				return true
			}
		}
		select {
		case <-exited:
			return false
		case <-deadline.C:
			return true
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Run runs example i of the catalog in env.
func (e *Example) Run(env *Env, i int) Result {
	port := env.Port + i
	var mu sync.Mutex
	show := func(p string) io.Writer { return &prefixWriter{mu: &mu, w: env.Out, prefix: p} }
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	res := Result{Name: e.Name}
	var sout, cout, serr, cerr syncBuffer
	var srv *exec.Cmd
	var srvErr error              // the server's exit status, once exited is closed
	exited := make(chan struct{}) // closed when the server process has ended
	if e.Server != nil {
		var err error
		srv, err = start(ctx, e.argv(env, "server", port), &sout, &serr, show("[server] "))
		if err != nil {
			res.Err = err
			return res
		}
		go func() {
			srvErr = srv.Wait()
			close(exited)
		}()
		if !waitListening(env.Addr, port, 20*time.Second, exited) {
			// the server ended before it listened: no client can connect
			err := fmt.Errorf("server exited before listening: %w", exitError(srvErr))
			if msg := lastLine(serr.String()); msg != "" {
				err = fmt.Errorf("%w: %s", err, msg)
			}
			res.Server = sout.String()
			res.Err = e.checkFsDAX(env, err, serr.String())
			return res
		}
	}
	prefix := "[client] "
	if e.Server == nil {
		prefix = "  "
	}
	cli, err := start(ctx, e.argv(env, "client", port), &cout, &cerr, show(prefix))
	if err == nil {
		err = cli.Wait()
		if err != nil {
			err = fmt.Errorf("client: %w", err)
		}
	}
	if srv != nil {
		if err != nil {
			srv.Process.Kill()
		}
		<-exited
		if srvErr != nil && err == nil {
			err = fmt.Errorf("server: %w", srvErr)
		}
	}
	if ctx.Err() != nil {
		err = errors.Join(err, fmt.Errorf("timed out after %v", runTimeout))
	}
	res.Server, res.Client = sout.String(), cout.String()
	if e.fsdaxFails(env) {
		res.Err = e.checkFsDAX(env, err, serr.String()+cerr.String())
		return res
	}
	if err == nil && e.Check != nil {
		err = e.Check(res.Server, res.Client)
	}
	res.Err = err
	return res
}

// checkFsDAX turns the outcome err of a run whose programs wrote stderr
// into the result of an example that must fail in env (fsdaxFails):
// without on-demand paging (rxe has none) FsDAX memory cannot be
// registered, so the example must stop with the library's error saying
// so, not pass and not fail some other way. Other examples' err is
// returned as it is.
func (e *Example) checkFsDAX(env *Env, err error, stderr string) error {
	if !e.fsdaxFails(env) {
		return err
	}
	switch {
	case err == nil:
		return errors.New("FsDAX memory registered on a device without ODP: expected the registration to fail")
	case !strings.Contains(stderr, "ODP"):
		return fmt.Errorf("expected the FsDAX registration error naming ODP, got %v", err)
	}
	return nil
}

// exitError is err, the outcome of exec.Cmd.Wait, or what to say when a
// process ended successfully where it should not have.
func exitError(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, " \t\r\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Available reports whether the example's binaries exist in env.
func (e *Example) Available(env *Env) bool {
	for _, side := range []string{"server", "client"} {
		if side == "server" && e.Server == nil {
			continue
		}
		bin := e.argv(env, side, 0)[0]
		if filepath.IsAbs(bin) {
			if _, err := os.Stat(bin); err != nil {
				return false
			}
		} else if _, err := exec.LookPath(bin); err != nil {
			return false
		}
	}
	return true
}
