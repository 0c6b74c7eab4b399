//go:build linux && cgo

package misuse_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/rdmatest"
	testfix "github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/srq"
)

// The bad-input table: every public call given what users get wrong, on
// an idle connection, one case at a time. Each case must return the typed
// error it names, and nothing may reach the wire: the device's packet
// counters (rxe's hw_counters, which count both ends: they share the
// device in the VM) must not move, the CQs stay empty and the connection
// stays usable.

const regionSize = 4096

// fixture is what the cases use.
type fixture struct {
	p, foreign   *peer.Peer
	e            *ep.Endpoint
	ip           string
	client       *conn.Conn
	server       *conn.Conn
	closedConn   *conn.Conn
	srq          *srq.SRQ
	local        map[mr.Usage]*mr.Local // a region of every single usage, and usageAll
	foreignLocal *mr.Local              // every usage, on the other peer
	closedLocal  *mr.Local
	remote       map[mr.Usage]*mr.Remote // the server's regions, by usage
	heap         []byte
}

const usageAll = mr.UsageReadSrc | mr.UsageReadDst | mr.UsageWriteSrc | mr.UsageWriteDst |
	mr.UsageFlushVisibility | mr.UsageFlushPersistent | mr.UsageSend | mr.UsageRecv

var singleUsages = []mr.Usage{mr.UsageReadSrc, mr.UsageReadDst, mr.UsageWriteSrc, mr.UsageWriteDst,
	mr.UsageFlushVisibility, mr.UsageFlushPersistent, mr.UsageSend, mr.UsageRecv}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func reg(t *testing.T, p *peer.Peer, usage mr.Usage) *mr.Local {
	m, _ := testfix.Region(t, p, regionSize, usage)
	return m
}

func remoteOf(t *testing.T, m *mr.Local) *mr.Remote {
	d := m.Descriptor()
	r, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	return r
}

func connect(t *testing.T, f *fixture, ccfg, scfg *conn.Config) (client, server *conn.Conn) {
	ctx := testCtx(t)
	type res struct {
		c   *conn.Conn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		r, err := f.e.NextConnReq(ctx, scfg)
		if err != nil {
			srv <- res{err: err}
			return
		}
		c, err := r.Connect(nil)
		srv <- res{c, err}
	}()
	req, err := conn.NewRequest(ctx, f.p, f.ip, f.e.Port(), ccfg)
	require.NoError(t, err)
	client, err = req.Connect(nil)
	require.NoError(t, err)
	r := <-srv
	require.NoError(t, r.err)
	server = r.c
	for _, c := range []*conn.Conn{client, server} {
		ev, err := c.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev)
	}
	return client, server
}

func newFixture(t *testing.T) *fixture {
	ip := rdmatest.IP(t)
	f := &fixture{ip: ip, local: map[mr.Usage]*mr.Local{}, remote: map[mr.Usage]*mr.Remote{}}
	f.p, _ = testfix.Peer(t)
	f.foreign, _ = testfix.Peer(t)
	e, err := ep.Listen(f.p, ip, "0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Shutdown()) })
	f.e = e
	s, err := srq.New(f.p, nil)
	require.NoError(t, err)
	f.srq = s
	f.client, f.server = connect(t, f, nil, nil)
	var closedServer *conn.Conn
	f.closedConn, closedServer = connect(t, f, nil, nil)
	t.Cleanup(func() {
		require.NoError(t, f.client.Close())
		require.NoError(t, f.server.Close())
		require.NoError(t, f.closedConn.Close())
		require.NoError(t, closedServer.Close())
		require.NoError(t, s.Close())
	})
	for _, u := range append(singleUsages, usageAll) {
		f.local[u] = reg(t, f.p, u)
		f.remote[u] = remoteOf(t, reg(t, f.p, u))
	}
	f.foreignLocal = reg(t, f.foreign, usageAll)
	m, _ := testfix.Region(t, f.p, regionSize, usageAll)
	require.NoError(t, m.Dereg()) // its cleanup's second Dereg is a no-op
	f.closedLocal = m
	f.heap = make([]byte, regionSize)
	require.NoError(t, f.client.ApplyRemotePeerCfg(peer.Cfg{DirectWriteToPMem: true}))
	return f
}

// lacking returns the local region with every usage but u.
func (f *fixture) lacking(t *testing.T, u mr.Usage) *mr.Local {
	key := usageAll &^ u
	if m := f.local[key]; m != nil {
		return m
	}
	m := reg(t, f.p, key)
	f.local[key] = m
	return m
}

// remoteLacking returns a remote region with every usage but u.
func (f *fixture) remoteLacking(t *testing.T, u mr.Usage) *mr.Remote {
	key := usageAll &^ u
	if r := f.remote[key]; r != nil {
		return r
	}
	r := remoteOf(t, reg(t, f.p, key))
	f.remote[key] = r
	return r
}

// counters reads rxe's port counters of the test device.
func counters(t *testing.T) map[string]int64 {
	paths, err := filepath.Glob("/sys/class/infiniband/*/ports/1/hw_counters/*")
	require.NoError(t, err)
	require.NotEmpty(t, paths, "rxe's hw_counters")
	out := map[string]int64{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		require.NoError(t, err)
		out[filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p))))+"/"+filepath.Base(p)] = v
	}
	return out
}

// badCase is one bad input: call must fail with an error matching want.
type badCase struct {
	name string
	want error
	call func() error
}

// dataOp is a data-path call with the usages it needs, in the shape of
// librpma's functions: a local region, a remote region, their offsets and
// a length.
type dataOp struct {
	name   string
	local  mr.Usage // 0: the operation takes no local region
	remote mr.Usage // 0: the operation takes no remote region
	flags  bool     // takes completion flags
	call   func(c *conn.Conn, l *mr.Local, lo int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error
}

func (f *fixture) dataOps() []dataOp {
	return []dataOp{
		{"Read", mr.UsageReadDst, mr.UsageReadSrc, true, func(c *conn.Conn, l *mr.Local, lo int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error {
			return c.Read(l, lo, r, ro, n, fl, 1)
		}},
		{"Write", mr.UsageWriteSrc, mr.UsageWriteDst, true, func(c *conn.Conn, l *mr.Local, lo int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error {
			return c.Write(r, ro, l, lo, n, fl, 1)
		}},
		{"WriteWithImm", mr.UsageWriteSrc, mr.UsageWriteDst, true, func(c *conn.Conn, l *mr.Local, lo int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error {
			return c.WriteWithImm(r, ro, l, lo, n, fl, 7, 1)
		}},
		{"WriteAndFlush", mr.UsageWriteSrc, mr.UsageWriteDst | mr.UsageFlushVisibility, true, func(c *conn.Conn, l *mr.Local, lo int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error {
			return c.WriteAndFlush(r, ro, l, lo, n, rpma.FlushVisibility, fl, 1)
		}},
		{"FlushVisibility", 0, mr.UsageFlushVisibility, true, func(c *conn.Conn, _ *mr.Local, _ int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error {
			return c.Flush(r, ro, n, rpma.FlushVisibility, fl, 1)
		}},
		{"FlushPersistent", 0, mr.UsageFlushPersistent, true, func(c *conn.Conn, _ *mr.Local, _ int, r *mr.Remote, ro, n int, fl rpma.CompletionFlags) error {
			return c.Flush(r, ro, n, rpma.FlushPersistent, fl, 1)
		}},
		{"AtomicWrite", 0, mr.UsageWriteDst, true, func(c *conn.Conn, _ *mr.Local, _ int, r *mr.Remote, ro, _ int, fl rpma.CompletionFlags) error {
			return c.AtomicWrite(r, ro, [8]byte{1}, fl, 1)
		}},
		{"Send", mr.UsageSend, 0, true, func(c *conn.Conn, l *mr.Local, lo int, _ *mr.Remote, _, n int, fl rpma.CompletionFlags) error {
			return c.Send(l, lo, n, fl, 1)
		}},
		{"SendWithImm", mr.UsageSend, 0, true, func(c *conn.Conn, l *mr.Local, lo int, _ *mr.Remote, _, n int, fl rpma.CompletionFlags) error {
			return c.SendWithImm(l, lo, n, fl, 7, 1)
		}},
		{"Recv", mr.UsageRecv, 0, false, func(c *conn.Conn, l *mr.Local, lo int, _ *mr.Remote, _, n int, _ rpma.CompletionFlags) error {
			return c.Recv(l, lo, n, 1)
		}},
		{"SRQ.Recv", mr.UsageRecv, 0, false, func(_ *conn.Conn, l *mr.Local, lo int, _ *mr.Remote, _, n int, _ rpma.CompletionFlags) error {
			return f.srq.Recv(l, lo, n, 1)
		}},
	}
}

// dataCases applies every perturbation that fits op.
func (f *fixture) dataCases(t *testing.T, op dataOp) []badCase {
	inval, closed := rpma.ErrInvalidArgument, os.ErrClosed
	good := func() (*mr.Local, *mr.Remote) {
		var l *mr.Local
		var r *mr.Remote
		if op.local != 0 {
			l = f.local[usageAll]
		}
		if op.remote != 0 {
			r = f.remote[usageAll]
		}
		return l, r
	}
	l, r := good()
	c := f.client
	fl := rpma.CompletionAlways
	n := 64
	var cases []badCase
	add := func(what string, want error, call func() error) {
		cases = append(cases, badCase{name: op.name + ": " + what, want: want, call: call})
	}
	if op.name != "SRQ.Recv" {
		add("nil connection", inval, func() error { return op.call(nil, l, 0, r, 0, n, fl) })
		add("zero-value connection", closed, func() error { return op.call(new(conn.Conn), l, 0, r, 0, n, fl) })
		add("closed connection", closed, func() error { return op.call(f.closedConn, l, 0, r, 0, n, fl) })
	} else {
		add("nil SRQ", inval, func() error { return (*srq.SRQ)(nil).Recv(l, 0, n, 1) })
		add("zero-value SRQ", closed, func() error { return new(srq.SRQ).Recv(l, 0, n, 1) })
	}
	if op.flags {
		for _, bad := range []rpma.CompletionFlags{0, 4, 8, -1} {
			add(fmt.Sprintf("completion flags %d", bad), inval, func() error { return op.call(c, l, 0, r, 0, n, bad) })
		}
	}
	if op.local != 0 {
		add("nil local region with a length", inval, func() error { return op.call(c, nil, 0, r, 0, n, fl) })
		add("zero-value local region", closed, func() error { return op.call(c, new(mr.Local), 0, r, 0, n, fl) })
		add("deregistered local region", closed, func() error { return op.call(c, f.closedLocal, 0, r, 0, n, fl) })
		add("local region of another peer", inval, func() error { return op.call(c, f.foreignLocal, 0, r, 0, n, fl) })
		add("local region without "+usageString(op.local), inval, func() error { return op.call(c, f.lacking(t, op.local), 0, r, 0, n, fl) })
		add("negative local offset", inval, func() error { return op.call(c, l, -1, r, 0, n, fl) })
		add("negative length", inval, func() error { return op.call(c, l, 0, r, 0, -1, fl) })
		add("local offset past the end", inval, func() error { return op.call(c, l, regionSize+1, r, 0, 0, fl) })
		add("local range past the end", inval, func() error { return op.call(c, l, regionSize-8, r, 0, 64, fl) })
		add("length past the end", inval, func() error { return op.call(c, l, 0, r, 0, regionSize+1, fl) })
	}
	if op.remote != 0 {
		// librpma's rule: a flush the remote region's usage does not
		// allow is not supported (RPMA_E_NOSUPP); other missing
		// usages are invalid arguments.
		flush := mr.UsageFlushVisibility | mr.UsageFlushPersistent
		lackWant := func(u mr.Usage) error {
			if u&flush != 0 {
				return rpma.ErrNotSupported
			}
			return inval
		}
		add("nil remote region", inval, func() error { return op.call(c, l, 0, nil, 0, n, fl) })
		add("zero-value remote region", lackWant(op.remote&flush), func() error { return op.call(c, l, 0, new(mr.Remote), 0, n, fl) })
		for _, u := range singleUsages {
			if op.remote&u != 0 {
				add("remote region without "+usageString(u), lackWant(u), func() error { return op.call(c, l, 0, f.remoteLacking(t, u), 0, n, fl) })
			}
		}
		add("negative remote offset", inval, func() error { return op.call(c, l, 0, r, -8, n, fl) })
		add("remote offset past the end", inval, func() error { return op.call(c, l, 0, r, regionSize+8, 0, fl) })
		if op.name != "AtomicWrite" { // always 8 bytes: see otherCases
			add("remote range past the end", inval, func() error { return op.call(c, l, 0, r, regionSize-8, 16, fl) })
		}
	}
	return cases
}

func usageString(u mr.Usage) string {
	names := map[mr.Usage]string{mr.UsageReadSrc: "UsageReadSrc", mr.UsageReadDst: "UsageReadDst",
		mr.UsageWriteSrc: "UsageWriteSrc", mr.UsageWriteDst: "UsageWriteDst", mr.UsageFlushVisibility: "UsageFlushVisibility",
		mr.UsageFlushPersistent: "UsageFlushPersistent", mr.UsageSend: "UsageSend", mr.UsageRecv: "UsageRecv"}
	var parts []string
	for _, b := range singleUsages {
		if u&b != 0 {
			parts = append(parts, names[b])
		}
	}
	return strings.Join(parts, "|")
}

// otherCases are the bad inputs outside the data path.
func (f *fixture) otherCases(t *testing.T) []badCase {
	inval := rpma.ErrInvalidArgument
	var nilCtx context.Context // a nil context is the point
	// One context for the whole table, which takes minutes under TCG.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	rw := f.remote[usageAll]
	c := f.client
	cases := []badCase{
		{"AtomicWrite: misaligned offset", inval, func() error { return c.AtomicWrite(rw, 4, [8]byte{}, rpma.CompletionAlways, 1) }},
		{"AtomicWrite: offset past the end", inval, func() error { return c.AtomicWrite(rw, regionSize, [8]byte{}, rpma.CompletionAlways, 1) }},
		{"Flush: unknown flush type", inval, func() error { return c.Flush(rw, 0, 8, rpma.FlushType(7), rpma.CompletionAlways, 1) }},
		{"Flush: persistent without the peer's direct write to PMem", rpma.ErrNotSupported, func() error {
			return f.server.Flush(remoteOf(t, f.local[usageAll]), 0, 8, rpma.FlushPersistent, rpma.CompletionAlways, 1)
		}},
		{"WriteAndFlush: persistent without the peer's direct write to PMem", rpma.ErrNotSupported, func() error {
			return f.server.WriteAndFlush(remoteOf(t, f.local[usageAll]), 0, f.local[usageAll], 0, 8, rpma.FlushPersistent, rpma.CompletionAlways, 1)
		}},
		{"NextEvent: nil context", inval, func() error { _, err := c.NextEvent(nilCtx); return err }},
		{"Conn.Wait: nil context", inval, func() error { _, _, err := c.Wait(nilCtx); return err }},
		{"Conn.Wait: no shared channel", rpma.ErrNotSharedChannel, func() error { _, _, err := c.Wait(ctx); return err }},
		{"Conn.TryWait: no shared channel", rpma.ErrNotSharedChannel, func() error { _, _, err := c.TryWait(); return err }},
		{"CQ.Wait: nil context", inval, func() error { return c.CQ().Wait(nilCtx) }},
		{"GetSendComp: nil context", inval, func() error { _, err := c.GetSendComp(nilCtx); return err }},
		{"GetSendComp: no separate CQs", inval, func() error { _, err := c.GetSendComp(ctx); return err }},
		{"GetRecvComp: no receive CQ", inval, func() error { _, err := c.GetRecvComp(ctx); return err }},
		{"CQ.GetWC: no room", inval, func() error { _, err := c.CQ().GetWC(nil); return err }},
		{"CQ.Resize: 0", inval, func() error { return c.CQ().Resize(0) }},
		{"CQ.Resize: beyond max_cqe", inval, func() error { return c.CQ().Resize(1 << 30) }},
		{"NextConnReq: nil context", inval, func() error { _, err := f.e.NextConnReq(nilCtx, nil); return err }},
		{"NewRequest: nil context", inval, func() error { _, err := conn.NewRequest(nilCtx, f.p, f.ip, f.e.Port(), nil); return err }},
		{"NewRequest: nil peer", inval, func() error { _, err := conn.NewRequest(ctx, nil, f.ip, f.e.Port(), nil); return err }},
		{"NewRequest: empty address", inval, func() error { _, err := conn.NewRequest(ctx, f.p, "", f.e.Port(), nil); return err }},
		{"NewRequest: empty port", inval, func() error { _, err := conn.NewRequest(ctx, f.p, f.ip, "", nil); return err }},
		{"ep.Listen: empty address", inval, func() error { _, err := ep.Listen(f.p, "", "0"); return err }},
		{"ep.Listen: empty port", inval, func() error { _, err := ep.Listen(f.p, f.ip, ""); return err }},
		{"ep.Listen: nil peer", inval, func() error { _, err := ep.Listen(nil, f.ip, "0"); return err }},
		{"mr.Reg: nil memory", inval, func() error { _, err := mr.Reg(f.p, nil, mr.UsageRecv); return err }},
		{"mr.Reg: usage 0", inval, func() error { _, err := mr.Reg(f.p, f.heap, 0); return err }},
		{"mr.Reg: unknown usage bit", inval, func() error { _, err := mr.Reg(f.p, f.heap, 1<<9); return err }},
		{"mr.Reg: nil peer", inval, func() error { _, err := mr.Reg(nil, f.heap, mr.UsageRecv); return err }},
		{"mr.RemoteFromDescriptor: short", inval, func() error { _, err := mr.RemoteFromDescriptor(make([]byte, 20)); return err }},
		{"mr.RemoteFromDescriptor: usage 0", inval, func() error { _, err := mr.RemoteFromDescriptor(make([]byte, 21)); return err }},
		{"mr.Local.Advise: range past the end", inval, func() error { return f.local[usageAll].Advise(0, regionSize+1, mr.AdvicePrefetch, 0) }},
		{"srq.New: RQSize -1", inval, func() error { _, err := srq.New(f.p, &srq.Config{RQSize: -1, RCQSize: 1}); return err }},
		{"srq.New: RCQSize -2", inval, func() error { _, err := srq.New(f.p, &srq.Config{RQSize: 1, RCQSize: -2}); return err }},
		{"srq.New: nil peer", inval, func() error { _, err := srq.New(nil, nil); return err }},
		{"Conn.ApplyRemotePeerCfg: closed", os.ErrClosed, func() error { return f.closedConn.ApplyRemotePeerCfg(peer.Cfg{}) }},
		{"Conn.Disconnect: closed", os.ErrClosed, func() error { return f.closedConn.Disconnect() }},
		{"Conn.NextEvent: closed", os.ErrClosed, func() error { _, err := f.closedConn.NextEvent(ctx); return err }},
		{"Conn.TryNextEvent: closed", os.ErrClosed, func() error { _, err := f.closedConn.TryNextEvent(); return err }},
		{"Conn.CompFD: no shared channel", rpma.ErrNotSharedChannel, func() error { _, err := c.CompFD(); return err }},
	}
	for _, bad := range []func(*conn.Config){
		// 0 means the default, and -1 is NoQueue or NoRetries where a
		// field has one (CQSize has not): the invalid values lie below.
		func(cfg *conn.Config) { cfg.CQSize = -1 },
		func(cfg *conn.Config) { cfg.SQSize = -2 },
		func(cfg *conn.Config) { cfg.RQSize = -2 },
		func(cfg *conn.Config) { cfg.RCQSize = -2 },
		func(cfg *conn.Config) { cfg.RetryCount = 8 },
		func(cfg *conn.Config) { cfg.RNRRetryCount = -2 },
		func(cfg *conn.Config) { cfg.Timeout = -time.Second },
		func(cfg *conn.Config) { cfg.CQSize = 1 << 30 },
		func(cfg *conn.Config) { cfg.SRQ = f.srq; cfg.SharedCompChannel = true; cfg.RCQSize = 4 },
	} {
		cfg := conn.DefaultConfig()
		bad(cfg)
		cases = append(cases,
			badCase{fmt.Sprintf("NewRequest: config %+v", *cfg), inval, func() error { _, err := conn.NewRequest(ctx, f.p, f.ip, f.e.Port(), cfg); return err }},
			badCase{fmt.Sprintf("NextConnReq: config %+v", *cfg), inval, func() error { _, err := f.e.NextConnReq(ctx, cfg); return err }},
		)
	}
	if !c.NativeFlush() {
		// The emulated flush reads 8 bytes at the offset, past the end
		// here; a native flush of the last 4 bytes is valid.
		cases = append(cases, badCase{"Flush: emulated read past the end", inval, func() error {
			return c.Flush(rw, regionSize-4, 4, rpma.FlushVisibility, rpma.CompletionAlways, 1)
		}})
	}
	return cases
}

// TestIntegrationBadInputs runs the table: each case returns its typed
// error and posts nothing.
func TestIntegrationBadInputs(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.closedConn.Close())
	var cases []badCase
	for _, op := range f.dataOps() {
		cases = append(cases, f.dataCases(t, op)...)
	}
	cases = append(cases, f.otherCases(t)...)
	t.Logf("%d bad-input cases", len(cases))
	require.GreaterOrEqual(t, len(cases), 150)

	// A settled, idle connection: counters change only by what a case
	// posts.
	time.Sleep(100 * time.Millisecond)
	var wcs [4]cq.WC
	for _, bc := range cases {
		before := counters(t)
		err := bc.call()
		require.Error(t, err, bc.name)
		require.True(t, errors.Is(err, bc.want), "%s: %v does not match %v", bc.name, err, bc.want)
		require.NotContains(t, err.Error(), "%!", "%s: a malformed message", bc.name)
		require.Equal(t, before, counters(t), "%s: something reached the wire", bc.name)
		for _, q := range []*cq.CQ{f.client.CQ(), f.server.CQ()} {
			_, err := q.GetWC(wcs[:])
			require.ErrorIs(t, err, rpma.ErrNoCompletion, "%s: a completion appeared", bc.name)
		}
		require.NoError(t, f.client.Broken(), "%s: the connection broke", bc.name)
	}

	// Still usable: a write and its flush complete.
	src, dst := f.local[usageAll], f.remote[usageAll]
	require.NoError(t, f.client.WriteAndFlush(dst, 0, src, 0, 64, rpma.FlushVisibility, rpma.CompletionAlways, 9))
	wc, err := f.client.GetSendComp(testCtx(t))
	if errors.Is(err, rpma.ErrInvalidArgument) { // no separate CQs: poll
		ctx := testCtx(t)
		for {
			n, err := f.client.CQ().GetWC(wcs[:1])
			if n == 1 {
				wc = wcs[0]
				break
			}
			require.ErrorIs(t, err, rpma.ErrNoCompletion)
			require.NoError(t, f.client.CQ().Wait(ctx))
		}
	}
	require.NoError(t, wc.Err())
	require.Equal(t, uint64(9), wc.OpContext)
}

// TestIntegrationCloseTwice: every object's Close is idempotent: the
// second returns nil, and the object then behaves as closed.
func TestIntegrationCloseTwice(t *testing.T) {
	ip := rdmatest.IP(t)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(t, err)
	p, err := peer.New(dev)
	require.NoError(t, err)
	f := &fixture{p: p, ip: ip}
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	f.e = e
	s, err := srq.New(p, nil)
	require.NoError(t, err)
	client, server := connect(t, f, nil, nil)
	req, err := conn.NewRequest(testCtx(t), p, ip, e.Port(), nil)
	require.NoError(t, err)
	r, err := pmem.Alloc(regionSize)
	require.NoError(t, err)
	m, err := mr.Reg(p, r.Bytes(), mr.UsageRecv)
	require.NoError(t, err)
	closers := []struct {
		name  string
		close func() error
	}{
		{"conn.Conn (client)", client.Close},
		{"conn.Conn (server)", server.Close},
		{"conn.ConnReq", req.Close},
		{"mr.Local", m.Dereg},
		{"srq.SRQ", s.Close},
		{"ep.Endpoint", e.Shutdown},
		{"peer.Peer", p.Close},
		{"peer.Device", dev.Close},
		{"pmem.Region", r.Close},
	}
	for _, c := range closers {
		require.NoError(t, c.close(), "%s: the first Close", c.name)
		require.NoError(t, c.close(), "%s: the second Close", c.name)
	}
	_, err = client.NextEvent(testCtx(t))
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, m.Advise(0, 8, mr.AdvicePrefetch, 0), os.ErrClosed)
	require.ErrorIs(t, s.Recv(nil, 0, 0, 1), os.ErrClosed)
	_, err = e.NextConnReq(testCtx(t), nil)
	require.ErrorIs(t, err, os.ErrClosed)
	_, err = mr.Reg(p, make([]byte, 8), mr.UsageRecv)
	require.ErrorIs(t, err, os.ErrClosed)
}
