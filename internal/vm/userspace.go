//go:build linux

package vm

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// A guest userspace other than the host's: a Debian root built once with
// debootstrap and cached, which the guest lays over the host's root (an
// overlay whose top layer it is) before it runs the command. The command
// then sees that release's libraries and tools (libibverbs, the rxe
// provider, librpma) and still finds the host's files that the release
// lacks at their usual paths (the project, Go, the test binaries).
type userspace struct {
	suite    string   // the Debian suite debootstrap installs
	packages []string // installed beside minbase
}

// UserspaceDebian13 is Debian 13 (trixie): rdma-core 56 (native RDMA
// FLUSH and atomic write in libibverbs), librpma 1.3 and perftest 25.
const UserspaceDebian13 = "debian13"

var userspaces = map[string]userspace{
	UserspaceDebian13: {suite: "trixie", packages: []string{
		"rdma-core", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils",
		"libibverbs-dev", "librdmacm-dev", "librpma-dev", "libprotobuf-c-dev", "perftest",
		"iproute2", "procps",
	}},
}

// Userspaces lists the names Config.Userspace accepts besides "" (the
// host's own).
func Userspaces() []string { return []string{UserspaceDebian13} }

// UserspaceRoot is a built userspace: Root is the directory the guest lays
// over its root; Include holds symbolic links to that release's
// rdma-core headers (infiniband, rdma), for building the library against
// them on the host (CGO_CFLAGS=-I...).
type UserspaceRoot struct {
	Name    string
	Root    string
	Include string
}

// EnsureUserspace returns the cached userspace name, building it first if
// needed (as root: debootstrap; a few minutes, once per inputs).
func EnsureUserspace(cacheDir, name string, log io.Writer) (*UserspaceRoot, error) {
	u, ok := userspaces[name]
	if !ok {
		return nil, prepErr("userspace", fmt.Errorf("unknown userspace %q", name), "want one of "+strings.Join(Userspaces(), ", "))
	}
	debootstrap, err := exec.LookPath("debootstrap")
	if err != nil {
		debootstrap = "/usr/sbin/debootstrap"
		if _, err := os.Stat(debootstrap); err != nil {
			return nil, prepErr("userspace", err, "apt-get install debootstrap (or run `make setup`)")
		}
	}
	mirror, err := aptMirror()
	if err != nil {
		return nil, prepErr("userspace", err, "")
	}
	version, _ := exec.Command("dpkg-query", "-W", "-f", "${Version}", "debootstrap").Output()
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", u.suite, mirror, strings.Join(u.packages, ","), version)
	dir := filepath.Join(cacheDir, "userspace", name+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	err = publish(cacheDir, dir, func(tmp string) error {
		fmt.Fprintf(log, "rxevm: building the %s userspace (debootstrap %s from %s; once)\n", name, u.suite, mirror)
		root := filepath.Join(tmp, "root")
		cmd := exec.Command(debootstrap, "--variant=minbase", "--include="+strings.Join(u.packages, ","), u.suite, root, mirror)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("debootstrap %s: %v: %s", u.suite, err, lastLines(out, 20))
		}
		// The guest binds its own /dev, /proc and /sys; apt's caches are
		// not needed.
		os.RemoveAll(filepath.Join(root, "var/cache/apt/archives"))
		inc := filepath.Join(tmp, "include")
		if err := os.MkdirAll(inc, 0o755); err != nil {
			return err
		}
		for _, d := range []string{"infiniband", "rdma"} {
			if err := os.Symlink(filepath.Join("..", "root", "usr", "include", d), filepath.Join(inc, d)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, prepErr("userspace", err, "debootstrap needs root and the Debian mirror apt uses")
	}
	return &UserspaceRoot{Name: name, Root: filepath.Join(dir, "root"), Include: filepath.Join(dir, "include")}, nil
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// debianURI matches a Debian archive URI in apt's sources (one-line
// "deb URI suite" or deb822 "URIs: URI"), not the security archive.
var debianURI = regexp.MustCompile(`^(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(\S+/debian)/?(?:\s|$)`)

// aptMirror returns the Debian mirror apt uses (the first main archive
// in its sources), so that the userspace comes from where the machine's
// packages come from.
func aptMirror() (string, error) {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	files = append([]string{"/etc/apt/sources.list"}, files...)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if m := debianURI.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
				fh.Close()
				return m[1], nil
			}
		}
		fh.Close()
	}
	return "", fmt.Errorf("no Debian archive in apt's sources")
}
