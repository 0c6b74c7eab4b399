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

// Env is where examples run.
type Env struct {
	Dir  string // the built binaries: <name>-server, <name>-client, <name>
	Addr string // the RDMA address both sides use
	Port int    // the first port; each example gets its own
	PMem string // a persistent-memory path ("" for DRAM)
	Out  io.Writer
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

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.mu.Lock()
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.mu.Unlock()
		p.buf = p.buf[i+1:]
	}
}

func start(ctx context.Context, argv []string, out *bytes.Buffer, show io.Writer) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = io.MultiWriter(out, show)
	cmd.Stderr = show
	return cmd, cmd.Start()
}

// waitListening waits until something listens on addr:port through
// rdma_cm (as `rdma resource show cm_id` reports), or d passes.
func waitListening(addr string, port int, d time.Duration) {
	want := fmt.Sprintf("%s:%d", addr, port)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		out, err := exec.Command("rdma", "resource", "show", "cm_id").Output()
		if err != nil {
			time.Sleep(time.Second) // no rdma tool: fall back to a pause
			return
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, want) && strings.Contains(l, "LISTEN") {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
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
	var sout, cout bytes.Buffer
	var srv *exec.Cmd
	if e.Server != nil {
		var err error
		srv, err = start(ctx, e.argv(env, "server", port), &sout, show("[server] "))
		if err != nil {
			res.Err = err
			return res
		}
		waitListening(env.Addr, port, 20*time.Second)
	}
	prefix := "[client] "
	if e.Server == nil {
		prefix = "  "
	}
	cli, err := start(ctx, e.argv(env, "client", port), &cout, show(prefix))
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
		if serr := srv.Wait(); serr != nil && err == nil {
			err = fmt.Errorf("server: %w", serr)
		}
	}
	if ctx.Err() != nil {
		err = errors.Join(err, fmt.Errorf("timed out after %v", runTimeout))
	}
	res.Server, res.Client = sout.String(), cout.String()
	if err == nil && e.Check != nil {
		err = e.Check(res.Server, res.Client)
	}
	res.Err = err
	return res
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
