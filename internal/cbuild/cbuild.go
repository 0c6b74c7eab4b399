package cbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// EnvCache names the environment variable that holds the cache's
// directory (an absolute path). Unset or empty, nothing is cached.
const EnvCache = "RPMA_C_CACHE"

// Program is one C program.
type Program struct {
	// Name is the binary's file name.
	Name string
	// Dir is the directory of Srcs. Every regular file in it enters the
	// cache key: the headers the sources include are there too.
	Dir string
	// Srcs are the source files, relative to Dir.
	Srcs []string
	// Source, if not empty, is the whole program's text, in place of Dir
	// and Srcs.
	Source string
	// Args come before the output and the sources (-std, -O2, warnings,
	// -I); Libs after the sources (-lrpma ...).
	Args, Libs []string
}

// systemFiles stand for the system's headers and libraries in the key:
// their size and modification time change with the packages that install
// them, and differ between the host's userspace and another one.
var systemFiles = []string{
	"/etc/os-release",
	"/usr/include/librpma.h",
	"/usr/include/infiniband/verbs.h",
	"/usr/include/rdma/rdma_cma.h",
	"/usr/include/protobuf-c/protobuf-c.h",
}

// Build compiles p with the C compiler cc into dir, or finds it in the
// cache, and returns the binary's path and whether it came from the
// cache. A compilation that succeeds is stored in the cache when there is
// one; a cache that cannot be written (read-only, full) only costs the
// next run a compilation.
func Build(ctx context.Context, cc string, p Program, dir string) (bin string, cached bool, err error) {
	if p.Name == "" || (p.Source == "" && len(p.Srcs) == 0) {
		return "", false, errors.New("cbuild: a program needs a name and sources")
	}
	cache := os.Getenv(EnvCache)
	var key string
	if cache != "" {
		if key, err = p.key(cc); err != nil {
			return "", false, err
		}
		bin = filepath.Join(cache, key, p.Name)
		if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
			return bin, true, nil
		}
	}
	out := filepath.Join(dir, p.Name)
	srcs, err := p.sources(dir)
	if err != nil {
		return "", false, err
	}
	args := append(append(slices.Clone(p.Args), "-o", out), srcs...)
	cmd := exec.CommandContext(ctx, cc, append(args, p.Libs...)...)
	cmd.WaitDelay = 5 * time.Second
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", false, fmt.Errorf("%s %s: %w\n%s", cc, filepath.Base(srcs[0]), err, b)
	}
	if cache != "" {
		_ = store(out, filepath.Join(cache, key), p.Name)
	}
	return out, false, nil
}

// sources returns the paths of p's source files: Source written into dir,
// or Srcs in Dir.
func (p Program) sources(dir string) ([]string, error) {
	if p.Source != "" {
		src := filepath.Join(dir, p.Name+".c")
		return []string{src}, os.WriteFile(src, []byte(p.Source), 0o644)
	}
	srcs := make([]string, len(p.Srcs))
	for i, s := range p.Srcs {
		srcs[i] = filepath.Join(p.Dir, s)
	}
	return srcs, nil
}

// key hashes what goes into p's binary: the compiler, the system files,
// p's fields and the contents of every regular file in p.Dir.
func (p Program) key(cc string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "cbuild 1\n%q %q %q %q %q\n", p.Name, p.Srcs, p.Args, p.Libs, p.Source)
	path, err := exec.LookPath(cc)
	if err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		return "", fmt.Errorf("cbuild: the compiler: %w", err)
	}
	for _, f := range append([]string{path}, systemFiles...) {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
		} else {
			fmt.Fprintf(h, "%s missing\n", f)
		}
	}
	if p.Source == "" {
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			return "", fmt.Errorf("cbuild: %w", err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(p.Dir, e.Name()))
			if err != nil {
				return "", fmt.Errorf("cbuild: %w", err)
			}
			fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// store copies bin into dir as name, atomically: a reader sees the whole
// binary or none (several test processes may store the same key).
func store(bin, dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	src, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
