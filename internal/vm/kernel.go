//go:build linux

package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kernel is an unpacked kernel package in the cache.
type Kernel struct {
	Package string // e.g. linux-image-6.12.117+deb12-amd64-unsigned
	Version string // the package version
	Release string // uname -r of the guest, e.g. 6.12.117+deb12-amd64
	Dir     string // cache entry: vmlinuz, lib/modules/<Release>/...
}

// Image is the path of the kernel image.
func (k *Kernel) Image() string { return filepath.Join(k.Dir, "vmlinuz") }

// ModulesDir is the root to pass to modprobe -d and depmod -b.
func (k *Kernel) ModulesDir() string { return k.Dir }

const aptHint = "run `make setup` (or: apt-get update && apt-get install qemu-system-x86 busybox-static kmod xz-utils); " +
	"the 6.12 kernels come from bookworm-security, which must be in apt's sources"

// kernelPackageRE matches the Debian 12 6.x point-release kernels, e.g.
// linux-image-6.12.117+deb12-amd64-unsigned. Never -cloud- or -rt-: they
// lack rdma_rxe.
func kernelPackageRE(series string) *regexp.Regexp {
	return regexp.MustCompile(`^linux-image-` + regexp.QuoteMeta(series) + `\.([0-9]+)\+deb12-amd64-unsigned$`)
}

// resolveKernelPackage maps a -kernel value to a package name and its
// candidate version, asking apt-cache (which reads local lists only).
func resolveKernelPackage(series string) (name, version string, err error) {
	switch {
	case strings.HasPrefix(series, "linux-image-"):
		name = series
	case series == "6.1":
		// linux-image-amd64 depends on linux-image-6.1.0-N-amd64.
		out, err := exec.Command("apt-cache", "depends", "linux-image-amd64").Output()
		if err != nil {
			return "", "", fmt.Errorf("apt-cache depends linux-image-amd64: %w", err)
		}
		m := regexp.MustCompile(`Depends: (linux-image-6\.1\.[0-9]+-[0-9]+-amd64)\s`).FindSubmatch(out)
		if m == nil {
			return "", "", errors.New("linux-image-amd64 does not depend on a 6.1 kernel")
		}
		name = string(m[1]) + "-unsigned"
	default:
		if !regexp.MustCompile(`^[0-9]+\.[0-9]+$`).MatchString(series) {
			return "", "", fmt.Errorf("kernel %q: want a series such as 6.12 or 6.1, or a package name", series)
		}
		re := kernelPackageRE(series)
		out, err := exec.Command("apt-cache", "search", "--names-only", re.String()).Output()
		if err != nil {
			return "", "", fmt.Errorf("apt-cache search: %w", err)
		}
		best := -1
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			pkg, _, _ := strings.Cut(sc.Text(), " ")
			m := re.FindStringSubmatch(pkg)
			if m == nil {
				continue
			}
			if n, _ := strconv.Atoi(m[1]); n > best {
				best, name = n, pkg
			}
		}
		if name == "" {
			return "", "", fmt.Errorf("no package matches %s in apt's lists", re)
		}
	}
	out, err := exec.Command("apt-cache", "show", "--no-all-versions", name).Output()
	if err != nil {
		return "", "", fmt.Errorf("apt-cache show %s: %w", name, err)
	}
	m := regexp.MustCompile(`(?m)^Version: (\S+)$`).FindSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("apt-cache show %s: no version", name)
	}
	return name, string(m[1]), nil
}

// cachedKernels lists the kernels already unpacked for series, newest
// first: the fallback when apt's lists are unavailable.
func cachedKernels(cacheDir, series string) []string {
	ents, _ := filepath.Glob(filepath.Join(cacheDir, "kernels", "linux-image-*"))
	var out []string
	for _, e := range ents {
		base := filepath.Base(e)
		pkg, _, _ := strings.Cut(base, "_")
		if strings.Contains(base, ".tmp") {
			continue
		}
		ok := false
		switch {
		case strings.HasPrefix(series, "linux-image-"):
			ok = pkg == series
		case series == "6.1":
			ok = regexp.MustCompile(`^linux-image-6\.1\.[0-9]+-[0-9]+-amd64-unsigned$`).MatchString(pkg)
		default:
			ok = kernelPackageRE(series).MatchString(pkg)
		}
		if ok {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return naturalLess(out[j], out[i]) })
	return out
}

// naturalLess compares strings with digit runs compared as numbers.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := leadingDigits(a), leadingDigits(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// EnsureKernel returns the unpacked kernel for series, downloading and
// unpacking it into the cache the first time.
func EnsureKernel(cacheDir, series string, log io.Writer) (*Kernel, error) {
	name, version, rerr := resolveKernelPackage(series)
	var dir string
	if rerr == nil {
		dir = filepath.Join(cacheDir, "kernels", name+"_"+version)
		err := publish(cacheDir, dir, func(tmp string) error {
			fmt.Fprintf(log, "rxevm: downloading and unpacking %s %s (once; cached in %s)\n", name, version, cacheDir)
			return fetchKernel(name, version, tmp)
		})
		if err != nil {
			if c := cachedKernels(cacheDir, series); len(c) > 0 {
				fmt.Fprintf(log, "rxevm: %v; using cached %s\n", err, filepath.Base(c[0]))
				dir = c[0]
			} else {
				return nil, prepErr("kernel "+name, err, aptHint)
			}
		}
	} else {
		c := cachedKernels(cacheDir, series)
		if len(c) == 0 {
			return nil, prepErr("kernel "+series, rerr, aptHint)
		}
		dir = c[0]
	}
	return loadKernel(dir)
}

func loadKernel(dir string) (*Kernel, error) {
	rel, err := os.ReadFile(filepath.Join(dir, "release"))
	if err != nil {
		return nil, prepErr("kernel cache "+dir, err, "remove the directory and run again")
	}
	pkg, ver, _ := strings.Cut(filepath.Base(dir), "_")
	return &Kernel{Package: pkg, Version: ver, Release: strings.TrimSpace(string(rel)), Dir: dir}, nil
}

// fetchKernel downloads name=version with apt-get download and unpacks the
// image and the modules into dir, then runs depmod there.
func fetchKernel(name, version, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dl := filepath.Join(dir, "deb")
	if err := os.Mkdir(dl, 0o755); err != nil {
		return err
	}
	if err := retryDownload(downloadAttempts, downloadBackoff, func() error {
		return aptDownload(dl, name, version)
	}); err != nil {
		return err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("apt-get download %s: expected one .deb, found %d", name, len(debs))
	}
	root := filepath.Join(dir, "root")
	if out, err := exec.Command("dpkg-deb", "-x", debs[0], root).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb -x: %v\n%s", err, out)
	}
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(images) != 1 {
		return fmt.Errorf("%s: expected one boot/vmlinuz-*, found %d", name, len(images))
	}
	rel := strings.TrimPrefix(filepath.Base(images[0]), "vmlinuz-")
	if err := os.Rename(images[0], filepath.Join(dir, "vmlinuz")); err != nil {
		return err
	}
	mods := filepath.Join(root, "lib", "modules", rel)
	if _, err := os.Stat(mods); err != nil {
		mods = filepath.Join(root, "usr", "lib", "modules", rel)
	}
	if err := os.MkdirAll(filepath.Join(dir, "lib", "modules"), 0o755); err != nil {
		return err
	}
	if err := os.Rename(mods, filepath.Join(dir, "lib", "modules", rel)); err != nil {
		return fmt.Errorf("%s: no modules for %s: %w", name, rel, err)
	}
	if out, err := exec.Command("depmod", "-b", dir, rel).CombinedOutput(); err != nil {
		return fmt.Errorf("depmod: %v\n%s", err, out)
	}
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	if err := os.RemoveAll(dl); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "release"), []byte(rel+"\n"), 0o644)
}

// The kernel package comes over the network, the one step of preparing a
// VM that can fail for a moment and then work (a mirror that drops a
// connection): it is tried downloadAttempts times, waiting downloadBackoff
// times the attempt number in between.
const (
	downloadAttempts = 4
	downloadBackoff  = 3 * time.Second
)

// aptDownload runs apt-get download for name=version in dir, after
// removing what an earlier attempt left there.
func aptDownload(dir, name, version string) error {
	partial, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range partial {
		os.RemoveAll(f)
	}
	cmd := exec.Command("apt-get", "download", "-q", name+"="+version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get download %s=%s: %v\n%s", name, version, err, out)
	}
	return nil
}

// retryDownload calls try up to attempts times until it succeeds and
// returns the last error, naming how many attempts failed.
func retryDownload(attempts int, backoff time.Duration, try func() error) error {
	var err error
	for i := 1; i <= attempts; i++ {
		if err = try(); err == nil {
			return nil
		}
		if i < attempts {
			time.Sleep(time.Duration(i) * backoff)
		}
	}
	return fmt.Errorf("%d attempts failed, the last: %w", attempts, err)
}
