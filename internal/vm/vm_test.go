//go:build linux

package vm

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCPIOReadableByCpio writes an archive and lists it with GNU cpio, the
// independent reader of the same format the kernel unpacks.
func TestCPIOReadableByCpio(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio not installed")
	}
	var buf bytes.Buffer
	c := &cpioWriter{w: &buf}
	c.Dir("bin")
	c.File("bin/hello", 0o755, []byte("hello, world\n"))
	c.File("odd", 0o644, []byte("abc")) // a size that needs padding
	c.Symlink("bin/sh", "hello")
	c.CharDev("console", 5, 1)
	require.NoError(t, c.Close())
	require.Zero(t, buf.Len()%4, "entries are 4-byte aligned")

	cmd := exec.Command("cpio", "-itv", "--quiet")
	cmd.Stdin = bytes.NewReader(buf.Bytes())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 5, string(out))
	require.True(t, strings.HasPrefix(lines[0], "drwxr-xr-x"), lines[0])
	require.Contains(t, lines[1], "-rwxr-xr-x")
	require.Contains(t, lines[1], " 13 ")
	require.Contains(t, lines[1], "bin/hello")
	require.Contains(t, lines[3], "bin/sh -> hello")
	require.True(t, strings.HasPrefix(lines[4], "crw-------"), lines[4])
	require.Contains(t, lines[4], "5,")

	dir := t.TempDir()
	cmd = exec.Command("cpio", "-id", "--quiet", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(buf.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "console") {
		t.Fatalf("cpio -id: %v: %s", err, out) // mknod may be refused; files must not
	}
	b, err := os.ReadFile(filepath.Join(dir, "bin/hello"))
	require.NoError(t, err)
	require.Equal(t, "hello, world\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "odd"))
	require.NoError(t, err)
	require.Equal(t, "abc", string(b))
}

func TestNaturalLess(t *testing.T) {
	require.True(t, naturalLess("linux-image-6.12.9+deb12", "linux-image-6.12.117+deb12"))
	require.False(t, naturalLess("linux-image-6.12.117+deb12", "linux-image-6.12.9+deb12"))
	require.True(t, naturalLess("a", "ab"))
	require.False(t, naturalLess("x1", "x1"))
}

func TestKernelPackageRE(t *testing.T) {
	re := kernelPackageRE("6.12")
	require.True(t, re.MatchString("linux-image-6.12.117+deb12-amd64-unsigned"))
	require.False(t, re.MatchString("linux-image-6.12.117+deb12-cloud-amd64-unsigned"), "cloud lacks rxe")
	require.False(t, re.MatchString("linux-image-6.12.117+deb12-rt-amd64-unsigned"), "rt lacks rxe")
	require.False(t, re.MatchString("linux-image-6.12.117+deb12-amd64"), "signed image is not the one")
	require.False(t, re.MatchString("linux-image-6.1.0-57-amd64-unsigned"))
}

func TestCachedKernelsNewestFirst(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{
		"linux-image-6.12.9+deb12-amd64-unsigned_6.12.9-1",
		"linux-image-6.12.117+deb12-amd64-unsigned_6.12.117-1~deb12u1",
		"linux-image-6.12.118+deb12-amd64-unsigned_x.tmp123", // half-built
		"linux-image-6.1.0-57-amd64-unsigned_6.1.192-3",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "kernels", n), 0o755))
	}
	got := cachedKernels(dir, "6.12")
	require.Len(t, got, 2)
	require.Contains(t, got[0], "6.12.117")
	got = cachedKernels(dir, "6.1")
	require.Len(t, got, 1)
	require.Contains(t, got[0], "6.1.0-57")
	require.Empty(t, cachedKernels(dir, "6.6"))
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tb := &tailBuffer{max: 8}
	tb.Write([]byte("0123456789"))
	tb.Write([]byte("ab"))
	require.Equal(t, "456789ab", tb.String())
}

func TestPrintTail(t *testing.T) {
	var b bytes.Buffer
	printTail(&b, "dmesg", "a\nb\r\nc\nd\n", 2)
	require.Equal(t, "rxevm: --- dmesg (last 2 lines) ---\n  c\n  d\nrxevm: --- end of dmesg ---\n", b.String())
}

func TestPublishIsAtomicAndOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "entry")
	builds := 0
	build := func(tmp string) error {
		builds++
		return os.WriteFile(tmp, []byte("done"), 0o644)
	}
	require.NoError(t, publish(dir, path, build))
	require.NoError(t, publish(dir, path, build))
	require.Equal(t, 1, builds)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "done", string(b))

	failing := filepath.Join(dir, "failing")
	require.Error(t, publish(dir, failing, func(tmp string) error {
		os.WriteFile(tmp, []byte("half"), 0o644)
		return os.ErrInvalid
	}))
	_, err = os.Stat(failing)
	require.True(t, os.IsNotExist(err), "a failed build publishes nothing")
	left, _ := filepath.Glob(failing + ".tmp*")
	require.Empty(t, left, "a failed build leaves no temporary")
}

func TestJobRoundTrip(t *testing.T) {
	dir := t.TempDir()
	j := &job{Argv: []string{"sh", "-c", "echo 'a b'"}, Dir: "/x", Env: []string{"A=1", "B=two words"},
		Node: nodeSpec{IP: TestIP, Prefix: 24, Netdev: "dummy"}}
	require.NoError(t, writeJob(dir, j))
	got, err := readJob(dir)
	require.NoError(t, err)
	require.Equal(t, j, got)
}

func TestIsGuestAgent(t *testing.T) {
	require.True(t, IsGuestAgent([]string{"rxevm", "--rxevm-guest-agent", "/run/rxevm"}))
	require.False(t, IsGuestAgent([]string{"rxevm", "--", "true"}))
}

func TestParsePMem(t *testing.T) {
	p, err := ParsePMem("256M")
	require.NoError(t, err)
	require.Equal(t, PMem{Size: 256 << 20}, p)
	p, err = ParsePMem("1G,/var/tmp/nv.img")
	require.NoError(t, err)
	require.Equal(t, PMem{Size: 1 << 30, File: "/var/tmp/nv.img"}, p)
	for _, bad := range []string{"", "x", "-2M", "3M", "8M", "256M5"} {
		_, err := ParsePMem(bad)
		require.Error(t, err, bad)
	}
}

func TestQemuArgs(t *testing.T) {
	cfg := &Config{CPUs: 2, MemMiB: 2048, TmpDir: "/tmp"}
	k := &Kernel{Dir: "/cache/k"}
	args := strings.Join(qemuArgs(cfg, k, "/cache/initrd", "/tmp/run", "", &Node{}), " ")
	require.Contains(t, args, "-nic none")
	require.NotContains(t, args, "nvdimm")
	require.Contains(t, args, "-append console=ttyS0 quiet panic=-1 rdinit=/init tsc=reliable softlockup_panic=1", "the guest's clock is the TSC and a soft lockup ends the VM (kernelCmdline)")
	require.Contains(t, args, "-accel tcg,thread=multi -cpu max -smp 2")
	require.NotContains(t, args, "-icount")

	ic := &Config{CPUs: 1, MemMiB: 2048, TmpDir: "/tmp", ICount: true}
	args = strings.Join(qemuArgs(ic, k, "/cache/initrd", "/tmp/run", "", &Node{}), " ")
	require.Contains(t, args, "-accel tcg,thread=single -cpu max -smp 1", "icount needs one TCG thread")
	require.Contains(t, args, "-icount shift=0,sleep=off")

	w := &Wire{Ports: [2]int{4000, 4001}}
	n := &Node{Index: 1, Wire: w, PMem: PMem{Size: 64 << 20, File: "/x/nv"}}
	args = strings.Join(qemuArgs(cfg, k, "/cache/initrd", "/tmp/run", "", n), " ")
	require.Contains(t, args, "udp=127.0.0.1:4000,localaddr=127.0.0.1:4001", "node 1 sends to node 0's port")
	require.Contains(t, args, "mac=52:54:00:12:34:02")
	require.Contains(t, args, "-machine pc,nvdimm=on")
	require.Contains(t, args, "-m 2048,slots=2,maxmem=2112M")
	require.Contains(t, args, "mem-path=/x/nv,size=67108864,align=2M")
	require.NotContains(t, args, "-nic none")
	require.NotContains(t, args, userspaceTag)

	args = strings.Join(qemuArgs(cfg, k, "/cache/initrd", "/tmp/run", "/cache/us/root", &Node{}), " ")
	require.Contains(t, args, "-virtfs local,path=/cache/us/root,mount_tag="+userspaceTag+",security_model=none,readonly=on")
}

func TestDebianURI(t *testing.T) {
	for line, want := range map[string]string{
		"deb http://deb.debian.org/debian bookworm main":                                "http://deb.debian.org/debian",
		"deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ bookworm main": "http://mirror.example/debian",
		"URIs: http://deb.debian.org/debian":                                            "http://deb.debian.org/debian",
		"deb http://security.debian.org/debian-security bookworm-security main":         "",
		"URIs: http://deb.debian.org/debian-security":                                   "",
		"# deb http://deb.debian.org/debian bookworm main":                              "",
	} {
		m := debianURI.FindStringSubmatch(line)
		got := ""
		if m != nil {
			got = m[1]
		}
		require.Equal(t, want, got, line)
	}
}

func TestUnknownUserspace(t *testing.T) {
	_, err := EnsureUserspace(t.TempDir(), "debian99", io.Discard)
	var pe *PrepareError
	require.ErrorAs(t, err, &pe)
	require.ErrorContains(t, err, "debian13")
}

func TestPreparePMemFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "nv")
	require.NoError(t, preparePMemFile(PMem{Size: 16 << 20, File: f}))
	st, err := os.Stat(f)
	require.NoError(t, err)
	require.Equal(t, int64(16<<20), st.Size())
	require.NoError(t, preparePMemFile(PMem{Size: 16 << 20, File: f}), "an existing file of the right size is kept")
	require.ErrorContains(t, preparePMemFile(PMem{Size: 32 << 20, File: f}), "refusing to resize")
}

func TestRetryDownload(t *testing.T) {
	calls := 0
	err := retryDownload(4, time.Millisecond, func() error {
		calls++
		if calls < 3 {
			return errors.New("connection reset")
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls)

	calls = 0
	err = retryDownload(2, time.Millisecond, func() error {
		calls++
		return errors.New("404 Not Found")
	})
	require.ErrorContains(t, err, "2 attempts failed, the last: 404 Not Found")
	require.Equal(t, 2, calls)
}

// TestCaptureSeesBothDirectionsOnce: datagrams between a wire's two ports
// are captured once each, in order, with their sender; other loopback
// traffic is not.
func TestCaptureSeesBothDirectionsOnce(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("capturing on the loopback needs root (make test runs as root)")
	}
	w, err := NewWire("")
	require.NoError(t, err)
	var socks [2]*net.UDPConn
	for i := range socks {
		socks[i], err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: w.Ports[i]})
		require.NoError(t, err)
		defer socks[i].Close()
	}
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer other.Close()

	c, err := w.Capture()
	require.NoError(t, err)
	send := func(from int, msg string) {
		_, err := socks[from].WriteToUDP([]byte(msg), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: w.Ports[1-from]})
		require.NoError(t, err)
	}
	send(0, "first")
	_, err = other.WriteToUDP([]byte("not the wire"), socks[1].LocalAddr().(*net.UDPAddr))
	require.NoError(t, err)
	send(1, "second")
	send(0, "third")
	time.Sleep(300 * time.Millisecond)
	frames, err := c.Stop()
	require.NoError(t, err)
	require.Equal(t, []Frame{{0, []byte("first")}, {1, []byte("second")}, {0, []byte("third")}}, frames)
}

// TestICountOneCPU: instruction counting defaults to one vCPU and refuses
// more, before anything is prepared or booted.
func TestICountOneCPU(t *testing.T) {
	c := Config{ICount: true}
	c.setDefaults()
	require.Equal(t, 1, c.CPUs)
	c = Config{}
	c.setDefaults()
	require.Equal(t, DefaultCPUs, c.CPUs)

	code, err := Run(t.Context(), Config{ICount: true, CPUs: 2, Argv: []string{"true"}, TmpDir: t.TempDir()}, nil)
	require.Equal(t, ExitBootFailed, code)
	require.ErrorContains(t, err, "-cpus 2 with -icount")
}
