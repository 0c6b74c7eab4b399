//go:build linux

package vm

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed init.sh
var initScript []byte

// busyboxPath is where Debian's busybox-static installs its binary.
const busyboxPath = "/bin/busybox"

// baseModules are what every guest loads. crc32_generic must come first:
// rxe asks the crypto API for crc32 and nothing can autoload it in a bare
// initramfs ("rxe_newlink: failed to add"). virtio_pci and virtio_console
// are built in on 6.12 and modules on 6.1; modprobe reports which.
var baseModules = []string{
	"crc32_generic",
	"virtio_pci", "virtio_console", "9pnet_virtio", "9p", "overlay",
	"rdma_rxe", "rdma_ucm", "dummy", "veth", "virtio_net", "sch_netem",
	// A prio qdisc and the u32 classifier: a test delays one kind of RoCE
	// packet (internal/powerloss's wire check).
	"sch_prio", "cls_u32",
}

// resolveModules lists, in load order and without duplicates, the module
// files the given modules need, from the kernel's own modules.dep.
func resolveModules(k *Kernel, names []string) ([]string, error) {
	var paths []string
	seen := map[string]bool{}
	for _, n := range names {
		// -C /dev/null: ignore the host's modprobe.d (ndctl's "install"
		// rule would replace libnvdimm's path with a command).
		out, err := exec.Command("modprobe", "-C", "/dev/null", "-d", k.ModulesDir(), "-S", k.Release,
			"--show-depends", n).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("modprobe --show-depends %s: %v: %s", n, err, bytes.TrimSpace(out))
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || f[0] != "insmod" || seen[f[1]] {
				continue // "builtin NAME", or already listed
			}
			seen[f[1]] = true
			paths = append(paths, f[1])
		}
	}
	return paths, nil
}

// readModule returns a module file decompressed (busybox insmod wants
// plain .ko files).
func readModule(path string) ([]byte, error) {
	switch {
	case strings.HasSuffix(path, ".ko.xz"):
		return exec.Command("xz", "-dc", path).Output()
	case strings.HasSuffix(path, ".ko.zst"):
		return exec.Command("zstd", "-dcq", path).Output()
	case strings.HasSuffix(path, ".ko.gz"):
		return exec.Command("gzip", "-dc", path).Output()
	}
	return os.ReadFile(path)
}

func moduleName(path string) string {
	b := filepath.Base(path)
	return b[:strings.Index(b, ".ko")] + ".ko"
}

func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}

// EnsureInitramfs returns the path of a cached initramfs for kernel k with
// the base modules, which /init always loads, and the pmem modules, which
// it loads when the control directory asks for them; it builds it the first
// time. Its cache key hashes every input: the kernel entry, the module
// lists, the init script and the busybox binary.
func EnsureInitramfs(cacheDir string, k *Kernel, pmem []string, log io.Writer) (string, error) {
	hint := "apt-get install busybox-static kmod xz-utils (or run `make setup`)"
	if err := checkStatic(busyboxPath); err != nil {
		return "", prepErr("busybox", err, hint)
	}
	busybox, err := os.ReadFile(busyboxPath)
	if err != nil {
		return "", prepErr("busybox", err, hint)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%q\n%q\n", filepath.Base(k.Dir), k.Release, baseModules, pmem)
	h.Write(initScript)
	h.Write(busybox)
	key := hex.EncodeToString(h.Sum(nil))[:16]
	path := filepath.Join(cacheDir, "initramfs", k.Release+"-"+key+".cpio")
	err = publish(cacheDir, path, func(tmp string) error {
		fmt.Fprintf(log, "rxevm: building initramfs for %s (once)\n", k.Release)
		base, err := resolveModules(k, baseModules)
		if err != nil {
			return err
		}
		extra, err := resolveModules(k, pmem)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		c := &cpioWriter{w: &buf}
		for _, d := range []string{"bin", "dev", "proc", "sys", "lib", "lib/modules", "ctl", "host", "upper", "newroot"} {
			c.Dir(d)
		}
		c.CharDev("dev/console", 5, 1)
		c.CharDev("dev/null", 1, 3)
		c.File("init", 0o755, initScript)
		c.File("bin/busybox", 0o755, busybox)
		c.Symlink("bin/sh", "busybox")
		seen := map[string]bool{}
		for _, set := range []struct {
			order string
			paths []string
		}{{"modules.order", base}, {"modules-pmem.order", extra}} {
			var order []string
			for _, p := range set.paths {
				if seen[p] {
					continue // a dependency the base set loads already
				}
				seen[p] = true
				data, err := readModule(p)
				if err != nil {
					return fmt.Errorf("decompress %s: %w", p, err)
				}
				name := moduleName(p)
				c.File("lib/modules/"+name, 0o644, data)
				order = append(order, name)
			}
			c.File(set.order, 0o644, []byte(strings.Join(order, "\n")+"\n"))
		}
		if err := c.Close(); err != nil {
			return err
		}
		return os.WriteFile(tmp, buf.Bytes(), 0o644)
	})
	if err != nil {
		return "", prepErr("initramfs", err, hint)
	}
	return path, nil
}
