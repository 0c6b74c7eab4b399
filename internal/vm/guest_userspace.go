//go:build linux

package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// userspaceDir is where the guest builds the union of a userspace and its
// own root.
const userspaceDir = "/run/rxevm-userspace"

// userspaceTag is the 9p mount tag of the userspace's root.
const userspaceTag = "rxevmuserspace"

// layUserspace mounts, at userspaceDir/root, an overlay whose top layer is
// the userspace's root (the host's userspaceTag share) and whose lower
// layer is the guest's own root, with
// a tmpfs for writes; then binds into it what the command needs that an
// overlay does not carry through (the kernel's file systems, the shared
// temporary directory, the FsDAX mount). It returns the union's root, for
// the command's chroot.
func layUserspace(ctlDir string) (string, error) {
	tmpDir, err := os.ReadFile(filepath.Join(ctlDir, ctlTmpDir))
	if err != nil {
		return "", err
	}
	root, upper, work := userspaceDir+"/root", userspaceDir+"/upper", userspaceDir+"/work"
	if err := os.MkdirAll(userspaceDir, 0o755); err != nil {
		return "", err
	}
	if err := unix.Mount("tmpfs", userspaceDir, "tmpfs", 0, "mode=0755"); err != nil {
		return "", fmt.Errorf("mount tmpfs: %w", err)
	}
	for _, d := range []string{root, upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	// The userspace's root lies inside the guest's root, which overlayfs
	// refuses as overlapping layers; the host exports it as a share of its
	// own (userspaceTag), mounted here on its own superblock.
	usRoot := userspaceDir + "/lower"
	if err := os.MkdirAll(usRoot, 0o755); err != nil {
		return "", err
	}
	if err := unix.Mount(userspaceTag, usRoot, "9p", unix.MS_RDONLY, "trans=virtio,version=9p2000.L,msize=262144"); err != nil {
		return "", fmt.Errorf("mount the userspace share: %w", err)
	}
	opts := fmt.Sprintf("lowerdir=%s:/,upperdir=%s,workdir=%s", usRoot, upper, work)
	if err := unix.Mount("overlay", root, "overlay", 0, opts); err != nil {
		return "", fmt.Errorf("mount overlay %s: %w", opts, err)
	}
	binds := []string{"/proc", "/sys", "/dev", strings.TrimSpace(string(tmpDir))}
	if _, err := os.Stat(FsDAXMount); err == nil {
		binds = append(binds, FsDAXMount)
	}
	for _, b := range binds {
		dst := root + b
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return "", err
		}
		if err := unix.Mount(b, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return "", fmt.Errorf("bind %s: %w", b, err)
		}
	}
	return root, nil
}

// lookPathIn is exec.LookPath as seen from inside root ("" for /): the
// path it returns is the one inside.
func lookPathIn(root, prog string) (string, error) {
	if root == "" {
		return exec.LookPath(prog)
	}
	candidates := []string{prog}
	if !strings.Contains(prog, "/") {
		candidates = nil
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			candidates = append(candidates, filepath.Join(d, prog))
		}
	}
	for _, c := range candidates {
		if fi, err := os.Stat(filepath.Join(root, c)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", &exec.Error{Name: prog, Err: exec.ErrNotFound}
}
