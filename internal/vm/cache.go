//go:build linux

package vm

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CacheDir is where kernels and initramfs images are kept: $RXEVM_CACHE if
// set, else rxevm under the user's cache directory (~/.cache/rxevm).
func CacheDir() (string, error) {
	if d := os.Getenv("RXEVM_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "rxevm"), nil
}

// cacheLock is an exclusive flock on a file in the cache directory. It is
// taken only when something must be built; readers of published entries
// never lock, since entries appear by atomic rename.
type cacheLock struct{ f *os.File }

func lockCache(dir string) (*cacheLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return &cacheLock{f: f}, nil
}

func (l *cacheLock) unlock() {
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

// publish builds path with build, unless it exists already. build writes
// into tmp (a sibling of path) and publish renames it into place, so a
// concurrent reader sees either nothing or the complete entry.
func publish(cacheDir, path string, build func(tmp string) error) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	l, err := lockCache(cacheDir)
	if err != nil {
		return err
	}
	defer l.unlock()
	if _, err := os.Stat(path); err == nil {
		return nil // built by another run while we waited
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
	os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}
