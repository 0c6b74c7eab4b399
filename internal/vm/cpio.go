//go:build linux

package vm

import (
	"fmt"
	"io"
)

// cpioWriter writes the "newc" cpio format that the kernel unpacks as an
// initramfs. Only what an initramfs needs: directories, regular files,
// symlinks and character devices.
type cpioWriter struct {
	w   io.Writer
	ino int
	err error
}

const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
	cpioLink = 0o120000
	cpioChr  = 0o020000
)

func (c *cpioWriter) entry(name string, mode uint32, rdevMajor, rdevMinor int, data []byte) {
	if c.err != nil {
		return
	}
	c.ino++
	nlink := 1
	if mode&0o170000 == cpioDir {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write([]byte(name + "\x00"))
	c.pad(len(hdr) + len(name) + 1)
	c.write(data)
	c.pad(len(data))
}

func (c *cpioWriter) write(b []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(b)
	}
}

func (c *cpioWriter) pad(n int) {
	if r := n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *cpioWriter) Dir(name string) { c.entry(name, cpioDir|0o755, 0, 0, nil) }
func (c *cpioWriter) File(name string, perm uint32, data []byte) {
	c.entry(name, cpioFile|perm, 0, 0, data)
}
func (c *cpioWriter) Symlink(name, target string) {
	c.entry(name, cpioLink|0o777, 0, 0, []byte(target))
}
func (c *cpioWriter) CharDev(name string, major, minor int) {
	c.entry(name, cpioChr|0o600, major, minor, nil)
}

// Close writes the trailer and returns the first error.
func (c *cpioWriter) Close() error {
	c.entry("TRAILER!!!", 0, 0, 0, nil)
	return c.err
}
