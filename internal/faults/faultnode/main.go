//go:build linux

// Command faultnode is the program the fault tests' VMs run: one side of
// a set of connections whose other side's VM the test kills.
//
//	faultnode lend -accept N [-die-file D]
//	                                      accept N connections, lend memory
//	faultnode lend-connect -peer A -conns N
//	                                      connect N times to A, lend memory
//	faultnode survive -as connect|accept -peer A -cases LIST -fault-file F
//
// Both roles also take -cut-file C -restore-file R -netem P: when C
// appears the node drops all its egress (tc netem P loss 100% on eth0)
// and prints "CUT"; when R appears it goes back to netem P and prints
// "RESTORED". With -link-file L, as each of L.1, L.2, ... appears the
// node sets its eth0 to the state it holds, "down" or "up" (ip link), and
// prints "LINK <state>"; a survivor's fault then begins when it sets the
// link down and ends when it sets it up (F and R are not watched).
// With -netem-file N, as each of N.1, N.2, ... appears the node applies
// netem P plus the parameters it holds (for example "loss 5%") and prints
// "NETEM <parameters>". With -die-file, the lender kills itself
// (SIGKILL) when D appears.
//
// The lending side registers a region, offers its descriptor in the
// private data and only answers (it has nothing outstanding); it is the
// side that fails. The surviving side opens one connection per case of
// LIST (comma-separated names of the cases table below), in order,
// prints "READY" once each has completed one write, then runs each case's
// activity. When F appears (the test created it as the fault began) it
// measures how each connection ended and prints, per case,
//
//	RESULT name ms=M end=E
//
// where M is the time from seeing F to the end (negative: the connection
// ended before the fault) and E one of retry-exceeded (a work completion
// with IBV_WC_RETRY_EXC_ERR), peer-timeout (a failure caused by
// rpma.ErrPeerTimeout), flushed (a first failed completion with
// IBV_WC_WR_FLUSH_ERR: the QP went to the error state with nothing failed
// before), completed (during's or after-restore's write succeeded), closed (the other
// side's CLOSED), resumed (writes
// completed again after the restore and every block read back intact;
// M is then the time to the first such completion), none (nothing
// within the case's patience), or other:... (anything else). Then it
// closes everything and prints "LEAKS fds=D objects=O kernel=K": the
// change in open file descriptors since before the first connection, the
// C-backed objects still tracked, and how many reports of kernel bugs
// (WARNING:, BUG:, oopses) the kernel log holds, each also printed as
// "KERNEL line".
package main

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

const port = "7305"

// A case is one connection of the surviving side.
type testCase struct {
	retry    int           // conn.Config.RetryCount (ignored when accepting)
	timeout  time.Duration // conn.Config.PeerTimeout
	ack      time.Duration // conn.Config.AckTimeout (0: rdma_cm's)
	estab    time.Duration // conn.Config.EstablishTimeout (0: the default)
	halfOpen bool          // accepted from a client that never completes the handshake (the lender's -halfopen)
	activity string        // busy: write after write; after: one write once F appears; during: one write duringDelay after F; after-restore: one write once R appears; idle: none
	patience time.Duration // how long after F to wait for the end
}

var cases = map[string]testCase{
	"retry2-busy":   {retry: 2, activity: "busy", patience: 30 * time.Second},
	"retry2-after":  {retry: 2, activity: "after", patience: 30 * time.Second},
	"timeout-busy":  {retry: 7, timeout: 2 * time.Second, activity: "busy", patience: 30 * time.Second},
	"timeout-idle":  {retry: 7, timeout: 2 * time.Second, activity: "idle", patience: 30 * time.Second},
	"retry7-after":  {retry: 7, activity: "after", patience: 10 * time.Second},
	"ignored-after": {retry: 2, activity: "after", patience: 10 * time.Second},
	// Accepted, never established (the client never reads its events),
	// then the client's VM dies: lost at its bound, EstablishTimeout
	// after the accept (which is aliveFor, 6 s, before the fault).
	"halfopen-idle": {retry: 7, estab: 10 * time.Second, halfOpen: true, activity: "idle", patience: 30 * time.Second},
	"closed-busy":   {retry: 7, activity: "busy", patience: 30 * time.Second},
	"closed-idle":   {retry: 7, activity: "idle", patience: 30 * time.Second},
	"resume-busy":   {retry: 7, activity: "verify", patience: 60 * time.Second},
	// TestLossyWire's.
	"lossy-verify":       {retry: 7, activity: "verify", patience: 90 * time.Second},
	"lossy-verify-ack":   {retry: 7, ack: 33 * time.Millisecond, activity: "verify", patience: 90 * time.Second},
	"lossy-timeout2":     {retry: 7, timeout: 2 * time.Second, activity: "busy", patience: 45 * time.Second},
	"lossy-timeout2-ack": {retry: 7, timeout: 2 * time.Second, ack: 33 * time.Millisecond, activity: "busy", patience: 45 * time.Second},
	"lossy-timeout10":    {retry: 7, timeout: 10 * time.Second, activity: "busy", patience: 45 * time.Second},
	"lossy-retry2":       {retry: 2, activity: "busy", patience: 45 * time.Second},
	// TestLinkDown's.
	"link-verify":   {retry: 7, activity: "verify", patience: 60 * time.Second},
	"link-during":   {retry: 7, activity: "during", patience: 30 * time.Second},
	"link-restored": {retry: 7, activity: "after-restore", patience: 30 * time.Second},
}

// duringDelay is how long after the fault began the during activity
// writes: inside TestLinkDown's 8 s outage.
const duringDelay = 2 * time.Second

// The verify activity's blocks: block i of the remote region holds the
// sequence number of the write that last wrote it, in every byte's word.
const (
	blockSize = 4096
	blocks    = 64
)

func main() {
	if len(os.Args) < 2 {
		fatal("usage: faultnode lend|lend-connect|survive [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	accept := fs.Int("accept", 1, "lend: connections to accept")
	conns := fs.Int("conns", 1, "lend-connect: connections to make")
	halfOpen := fs.Int("halfopen", 0, "lend-connect: of the connections, the last N never complete the handshake (their events are never read)")
	peerIP := fs.String("peer", "", "the other side's address")
	as := fs.String("as", "connect", "survive: connect or accept")
	list := fs.String("cases", "", "survive: the cases, comma-separated")
	faultFile := fs.String("fault-file", "", "survive: created as the fault begins")
	cutFile := fs.String("cut-file", "", "drop all egress once this file appears")
	restoreFile := fs.String("restore-file", "", "stop dropping once this file appears")
	netem := fs.String("netem", "", "the netem parameters the wire had at boot")
	netemFile := fs.String("netem-file", "", "apply -netem plus the parameters of each of FILE.1, FILE.2, ... as it appears")
	linkFile := fs.String("link-file", "", "set eth0 down or up as each of FILE.1, FILE.2, ... says, as it appears")
	dieFile := fs.String("die-file", "", "lend: SIGKILL itself once this file appears")
	fs.Parse(os.Args[2:])
	if *cutFile != "" {
		go cutter(*cutFile, *restoreFile, *netem)
	}
	if *netemFile != "" {
		go netemWatcher(*netemFile, *netem)
	}
	// The survivor's fault begins and ends as the host's files appear,
	// or, when it sets its own link down and up, as it does: it knows
	// better than the files, which 9p can show it seconds late on a
	// loaded host.
	fault, restore := newMoment(), newMoment()
	if *linkFile != "" {
		go watchFile(*linkFile, func(state string) {
			if state != "up" && state != "down" {
				fatal("-link-file: %q is neither up nor down", state)
			}
			if state == "down" {
				fault.happen() // requests fail while ip runs
			}
			if out, err := exec.Command(toolPath("ip"), "link", "set", "dev", "eth0", state).CombinedOutput(); err != nil {
				fatal("ip link set dev eth0 %s: %v: %s", state, err, out)
			}
			fmt.Printf("LINK %s\n", state)
			if state == "up" {
				restore.happen()
			}
		})
	}
	if *dieFile != "" {
		go func() {
			waitFile(*dieFile)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}()
	}
	var err error
	switch os.Args[1] {
	case "lend":
		err = lend(*accept)
	case "lend-connect":
		err = lendConnect(*peerIP, *conns, *halfOpen)
	case "survive":
		if *linkFile == "" {
			go fault.happenOnFile(*faultFile)
			go restore.happenOnFile(*restoreFile)
		}
		err = survive(*as, *peerIP, strings.Split(*list, ","), fault, restore)
	default:
		err = fmt.Errorf("unknown role %q", os.Args[1])
	}
	if err != nil {
		fatal("faultnode %s: %v", os.Args[1], err)
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// waitFile returns once path exists.
func waitFile(path string) {
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// moment is something that happens once, and when it did: the fault's
// beginning or its end.
type moment struct {
	once sync.Once
	done chan struct{} // closed once it happened
	at   time.Time     // when, set before done closes
}

func newMoment() *moment { return &moment{done: make(chan struct{})} }

// happen marks the moment as now; only the first call counts.
func (m *moment) happen() {
	m.once.Do(func() {
		m.at = time.Now()
		close(m.done)
	})
}

// happenOnFile marks the moment as path appears (never, for "").
func (m *moment) happenOnFile(path string) {
	if path != "" {
		waitFile(path)
		m.happen()
	}
}

// setNetem changes the node's egress to netem base plus extra.
func setNetem(base string, extra ...string) {
	args := append(append([]string{"qdisc", "change", "dev", "eth0", "root", "netem"}, strings.Fields(base)...), extra...)
	if out, err := exec.Command(toolPath("tc"), args...).CombinedOutput(); err != nil {
		fatal("tc %v: %v: %s", args, err, out)
	}
}

// netemWatcher applies base plus the parameters path holds whenever they
// change.
func netemWatcher(path, base string) {
	watchFile(path, func(params string) {
		setNetem(base, strings.Fields(params)...)
		fmt.Printf("NETEM %s\n", params)
	})
}

// watchFile calls apply with the contents (trimmed) of path.1, path.2
// and so on, in order, as each appears (polling every 50 ms). The host
// writes each under a new name (by a rename: complete when it appears),
// because over 9p a file rewritten in place can be read with a stale
// size or stale bytes.
func watchFile(path string, apply func(string)) {
	for seq := 1; ; {
		watching.Lock() // the file's descriptor is open meanwhile
		b, err := os.ReadFile(fmt.Sprintf("%s.%d", path, seq))
		if err == nil {
			apply(strings.TrimSpace(string(b)))
			seq++
		}
		watching.Unlock()
		if err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// watching is held while a watcher has a file open: the leak counts take
// it, so that they never count a watcher's descriptor (seen: a watcher
// reading the host's last file as the count was taken).
var watching sync.Mutex

// toolPath finds a system tool (tc, ip, dmesg), also where PATH does not
// reach.
func toolPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		if p := d + "/" + name; fileExists(p) {
			return p
		}
	}
	return name
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// cutter drops the node's egress while the cut lasts.
func cutter(cut, restore, netem string) {
	tc := func(extra ...string) { setNetem(netem, extra...) }
	waitFile(cut)
	tc("loss", "100%")
	fmt.Println("CUT")
	if restore == "" {
		return
	}
	waitFile(restore)
	tc()
	fmt.Println("RESTORED")
}

// newPeer opens the device of the VM's own address.
func newPeer() (*peer.Peer, func(), error) {
	dev, err := peer.DeviceForAddress(os.Getenv("RPMA_TEST_IP"), rpma.IbvContextLocal)
	if err != nil {
		return nil, nil, err
	}
	p, err := peer.New(dev)
	if err != nil {
		dev.Close()
		return nil, nil, err
	}
	return p, func() { p.Close(); dev.Close() }, nil
}

// lentSize is the size of the lent region, which the cases share.
const lentSize = 2 << 20

// lendRegion registers lentSize bytes for the other side's writes.
func lendRegion(p *peer.Peer) ([]byte, error) {
	m, err := mr.Reg(p, make([]byte, lentSize), mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushVisibility)
	if err != nil {
		return nil, err
	}
	d := m.Descriptor()
	return d[:], nil
}

// serve answers a connection's events until it ends.
func serve(c *conn.Conn) {
	for {
		ev, err := c.NextEvent(context.Background())
		if err != nil || ev == rpma.ConnClosed || ev == rpma.ConnLost {
			c.Close()
			return
		}
	}
}

func lend(n int) error {
	p, done, err := newPeer()
	if err != nil {
		return err
	}
	defer done()
	pdata, err := lendRegion(p)
	if err != nil {
		return err
	}
	e, err := ep.Listen(p, os.Getenv("RPMA_TEST_IP"), port)
	if err != nil {
		return err
	}
	fmt.Println("LISTENING")
	for i := 0; i < n; i++ {
		req, err := e.NextConnReq(context.Background(), nil)
		if err != nil {
			return err
		}
		c, err := req.Connect(pdata)
		if err != nil {
			return err
		}
		go serve(c)
	}
	select {} // until the test kills the VM
}

func lendConnect(peerIP string, n, halfOpen int) error {
	p, done, err := newPeer()
	if err != nil {
		return err
	}
	defer done()
	pdata, err := lendRegion(p)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if i >= n-halfOpen {
			// Connect, and never read an event: librdmacm then never
			// sends the RTU, and the survivor's side is never
			// established. The survivor listens by now.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			req, err := conn.NewRequest(ctx, p, peerIP, port, nil)
			cancel()
			if err != nil {
				return err
			}
			if _, err := req.Connect(pdata); err != nil {
				return err
			}
			continue
		}
		c, err := connect(p, peerIP, conn.DefaultConfig(), pdata)
		if err != nil {
			return err
		}
		go serve(c)
	}
	fmt.Println("CONNECTED")
	select {}
}

// connect connects to peerIP, retrying while nobody listens, and waits
// for ESTABLISHED.
func connect(p *peer.Peer, peerIP string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := tryConnect(ctx, p, peerIP, cfg, pdata)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func tryConnect(ctx context.Context, p *peer.Peer, peerIP string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	req, err := conn.NewRequest(ctx, p, peerIP, port, cfg)
	if err != nil {
		return nil, err
	}
	return establish(ctx, req, pdata)
}

// establish connects req (either side) and waits for ESTABLISHED; on
// failure the connection is closed.
func establish(ctx context.Context, req *conn.ConnReq, pdata []byte) (*conn.Conn, error) {
	c, err := req.Connect(pdata)
	if err != nil {
		return nil, err
	}
	if err := established(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func established(ctx context.Context, c *conn.Conn) error {
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = fmt.Errorf("connection %v", ev)
	}
	return err
}

// survivor is one case's connection.
type survivor struct {
	name string
	tc   testCase
	c    *conn.Conn
	rem  *mr.Remote
	src  *mr.Local
	base int // where its blocks are, in src and in the remote region: its own, as cases share both

	fault, restore *moment // when the fault began, and when it was over
}

// survive runs the cases; fault is when the fault began, restore when
// it ended.
func survive(as, peerIP string, names []string, fault, restore *moment) error {
	// A first peer, closed at once, lets librdmacm and the runtime open
	// what they keep for the process's life (device contexts, the
	// poller), so that the count below sees only the connections' own.
	_, done, err := newPeer()
	if err != nil {
		return err
	}
	done()
	leak.Enable()
	watching.Lock()
	before := leak.Take()
	watching.Unlock()
	fmt.Printf("FDS-BEFORE %s\n", strings.Join(fdTargets(), " "))
	p, done, err := newPeer()
	if err != nil {
		return err
	}
	if len(names)*blocks*blockSize > lentSize {
		return fmt.Errorf("%d cases need more than the %d bytes lent", len(names), lentSize)
	}
	src, err := mr.Reg(p, make([]byte, len(names)*blocks*blockSize), mr.UsageWriteSrc|mr.UsageReadDst)
	if err != nil {
		return err
	}
	var e *ep.Endpoint
	if as == "accept" {
		if e, err = ep.Listen(p, os.Getenv("RPMA_TEST_IP"), port); err != nil {
			return err
		}
		fmt.Println("LISTENING")
	}
	// The half-open cases last: they are the lender's last connections.
	slices.SortStableFunc(names, func(a, b string) int {
		return cmp.Compare(b2i(cases[a].halfOpen), b2i(cases[b].halfOpen))
	})
	var ss []*survivor
	for _, name := range names {
		tc, ok := cases[name]
		if !ok {
			return fmt.Errorf("unknown case %q", name)
		}
		cfg := conn.DefaultConfig()
		cfg.RetryCount, cfg.PeerTimeout, cfg.AckTimeout, cfg.EstablishTimeout = tc.retry, tc.timeout, tc.ack, tc.estab
		var c *conn.Conn
		switch {
		case tc.halfOpen && as == "accept":
			c, err = acceptHalfOpen(e, cfg)
		case tc.halfOpen:
			return fmt.Errorf("%s: a half-open case needs -as accept", name)
		case as == "accept":
			c, err = acceptOne(e, cfg)
		default:
			c, err = connect(p, peerIP, cfg, nil)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rem, err := mr.RemoteFromDescriptor(c.PrivateData())
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s := &survivor{name: name, tc: tc, c: c, rem: rem, src: src, base: len(ss) * blocks * blockSize, fault: fault, restore: restore}
		if tc.halfOpen {
			ss = append(ss, s) // nothing to write to: it is not established
			continue
		}
		if err := s.write(context.Background()); err != nil {
			return fmt.Errorf("%s: the first write: %w", name, err)
		}
		ss = append(ss, s)
	}
	if e != nil {
		e.Shutdown()
	}
	fmt.Println("READY")

	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := s.run()
			<-fault.done
			mu.Lock()
			fmt.Printf("RESULT %s ms=%d end=%s\n", s.name, end.at.Sub(fault.at).Milliseconds(), end.what)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, s := range ss {
		if err := s.c.Close(); err != nil {
			fmt.Printf("CLOSE %s: %v\n", s.name, err)
		}
	}
	src.Dereg()
	done()
	watching.Lock() // and keep it: the watchers have nothing more to do
	after := leak.Take()
	if after.FDs != before.FDs {
		fmt.Printf("FDS %s\n", strings.Join(fdTargets(), " "))
	}
	var cobjects int64
	for kind, n := range after.CObjects {
		if d := n - before.CObjects[kind]; d != 0 {
			fmt.Printf("COBJECTS %s %+d\n", kind, d)
			cobjects += d
		}
	}
	fmt.Printf("COUNTERS %s\n", rxeCounters())
	fmt.Printf("LEAKS fds=%d objects=%d cobjects=%d kernel=%d\n", after.FDs-before.FDs, after.Objects-before.Objects, cobjects, kernelTrouble())
	return nil
}

// rxeCounters returns rxe0's non-zero hardware counters (retries, timeouts,
// duplicate and out-of-sequence packets: what the wire did), as name=value.
func rxeCounters() string {
	const dir = "/sys/class/infiniband/rxe0/ports/1/hw_counters"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "unreadable:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name())
		if v := strings.TrimSpace(string(b)); err == nil && v != "0" {
			out = append(out, e.Name()+"="+v)
		}
	}
	return strings.Join(out, " ")
}

// kernelProblem matches the kernel's reports of its own bugs: WARN_ON,
// BUG_ON, oopses, general protection faults and the sanitizers'.
var kernelProblem = regexp.MustCompile(`WARNING:|BUG:|Oops|general protection fault|UBSAN:|KASAN:|refcount_t:`)

// kernelTrouble prints the kernel log's reports of kernel bugs ("KERNEL
// line") and returns how many there are.
func kernelTrouble() int {
	out, err := exec.Command(toolPath("dmesg")).CombinedOutput()
	if err != nil {
		fmt.Printf("KERNEL dmesg: %v\n", err)
		return 1
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if kernelProblem.MatchString(l) {
			fmt.Printf("KERNEL %s\n", l)
			n++
		}
	}
	return n
}

func acceptOne(e *ep.Endpoint, cfg *conn.Config) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return establish(ctx, req, nil)
}

// acceptHalfOpen accepts the next request and does not wait for
// ESTABLISHED, which a half-open client never lets come.
func acceptHalfOpen(e *ep.Endpoint, cfg *conn.Config) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return req.Connect(nil)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// write posts one 4 KiB write and waits for its completion (polling).
func (s *survivor) write(ctx context.Context) error { return s.writeBlock(ctx, 0) }

// writeBlock writes block i of the source to block i of the remote
// region and waits for its completion.
func (s *survivor) writeBlock(ctx context.Context, i int) error {
	off := s.base + i*blockSize
	if err := s.c.Write(s.rem, off, s.src, off, blockSize, rpma.CompletionAlways, 1); err != nil {
		return err
	}
	return s.complete(ctx)
}

// complete waits for the completion of the one outstanding request:
// polling, then waiting on the CQ, which also ends when the connection
// is closed or lost.
func (s *survivor) complete(ctx context.Context) error {
	var wcs [1]cq.WC
	for {
		n, err := s.c.CQ().GetWC(wcs[:])
		if n == 1 {
			return wcs[0].Err()
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return err
		}
		if err := s.c.CQ().Wait(ctx); err != nil {
			return err
		}
	}
}

type ending struct {
	at   time.Time
	what string
}

// run runs the case's activity and returns how the connection ended.
func (s *survivor) run() ending {
	kill := s.fault.done
	deadline := func() context.Context {
		// Bounded by the patience once the kill is seen, and by a minute
		// before it (the test's own bound is larger).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		go func() {
			select {
			case <-kill:
				select {
				case <-time.After(s.tc.patience):
				case <-ctx.Done():
				}
			case <-ctx.Done():
			}
			cancel()
		}()
		return ctx
	}
	ctx := deadline()
	var err error
	switch s.tc.activity {
	case "busy":
		for err == nil {
			err = s.write(ctx)
		}
	case "after":
		select {
		case <-kill:
			err = s.write(ctx)
		case <-ctx.Done():
			err = ctx.Err()
		}
	case "idle":
		for err == nil {
			var ev rpma.ConnEvent
			ev, err = s.c.NextEvent(ctx)
			if err == nil && ev == rpma.ConnClosed {
				return ending{at: time.Now(), what: "closed"}
			}
			if err == nil && ev != rpma.ConnEstablished {
				err = fmt.Errorf("event %v: %w", ev, s.c.Broken())
			}
		}
	case "during":
		select {
		case <-kill:
			time.Sleep(duringDelay)
			if err = s.write(ctx); err == nil {
				return ending{at: time.Now(), what: "completed"}
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
	case "after-restore":
		select {
		case <-s.restore.done:
			if err = s.write(ctx); err == nil {
				return ending{at: time.Now(), what: "completed"}
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
	case "verify":
		return s.verify(ctx)
	}
	return ending{at: time.Now(), what: classify(s.c, err)}
}

// verify writes numbered blocks round the region until the fault is over
// and writes complete again, then reads the region back and checks that
// every block holds what its last write put there.
func (s *survivor) verify(ctx context.Context) ending {
	mem := s.src.Bytes()[s.base : s.base+blocks*blockSize]
	last := make([]uint64, blocks)
	var resumedAt time.Time
	// Throughput: writes completed before the fault (the loss-free wire)
	// and while it lasted, each over its own time.
	start, faultAt := time.Now(), time.Time{}
	var free, faulty int
	defer func() {
		if faultAt.IsZero() || resumedAt.IsZero() {
			return
		}
		fmt.Printf("THROUGHPUT %s free=%.1f/s fault=%.1f/s\n", s.name,
			float64(free)/faultAt.Sub(start).Seconds(), float64(faulty)/resumedAt.Sub(faultAt).Seconds())
	}()
	for seq := uint64(1); ; seq++ {
		i := int(seq % blocks)
		for off := i * blockSize; off < (i+1)*blockSize; off += 8 {
			binary.LittleEndian.PutUint64(mem[off:], seq)
		}
		if err := s.writeBlock(ctx, i); err != nil {
			return ending{at: time.Now(), what: classify(s.c, err)}
		}
		last[i] = seq
		select {
		case <-s.fault.done:
			if faultAt.IsZero() {
				faultAt = s.fault.at
			}
			if resumedAt.IsZero() {
				faulty++
			}
		default:
			free++
		}
		select {
		case <-s.restore.done:
			if resumedAt.IsZero() {
				resumedAt = time.Now()
			}
		default:
		}
		if !resumedAt.IsZero() && time.Since(resumedAt) > 2*time.Second {
			break
		}
	}
	clear(mem)
	if err := s.c.Read(s.src, s.base, s.rem, s.base, blocks*blockSize, rpma.CompletionAlways, 2); err != nil {
		return ending{at: time.Now(), what: classify(s.c, err)}
	}
	if err := s.complete(ctx); err != nil {
		return ending{at: time.Now(), what: classify(s.c, err)}
	}
	for i := 0; i < blocks; i++ {
		for off := i * blockSize; off < (i+1)*blockSize; off += 8 {
			if got := binary.LittleEndian.Uint64(mem[off:]); got != last[i] {
				return ending{at: resumedAt, what: fmt.Sprintf("other:block_%d_holds_%d_not_%d", i, got, last[i])}
			}
		}
	}
	return ending{at: resumedAt, what: "resumed"}
}

// classify names how a connection ended.
func classify(c *conn.Conn, err error) string {
	var wce *rpma.WCError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "none" // the patience ran out
	case errors.Is(err, rpma.ErrPeerTimeout), errors.Is(c.Broken(), rpma.ErrPeerTimeout):
		return "peer-timeout"
	case errors.As(err, &wce) && wce.Status == rpma.WCRetryExcErr:
		return "retry-exceeded"
	case errors.As(err, &wce) && wce.Status == rpma.WCWRFlushErr:
		return "flushed" // the QP went to the error state with nothing failed before
	case isClosed(err), isClosed(c.Broken()):
		return "closed"
	}
	return "other:" + strings.ReplaceAll(fmt.Sprint(err), " ", "_")
}

// fdTargets lists the process's open fds and what they are.
func fdTargets() []string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		t, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"="+t)
	}
	return out
}

// isClosed reports whether err is the other side's CLOSED.
func isClosed(err error) bool {
	var ce *rpma.ConnEventError
	return errors.As(err, &ce) && ce.Event == rpma.ConnClosed
}
