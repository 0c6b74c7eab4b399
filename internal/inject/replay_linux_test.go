//go:build rpma_inject && linux && cgo

package inject_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/rpma"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(envRole); role != "" {
		os.Exit(runCounterpart(role))
	}
	leak.Enable()
	rpma.SetLogFunction(logs.add)
	os.Exit(m.Run())
}

// logs keeps the library's log messages of the current run.
var logs logBook

type logBook struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logBook) add(_ rpma.LogLevel, _ string, _ int, _ string, msg string) {
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
}

func (l *logBook) reset() {
	l.mu.Lock()
	l.msgs = nil
	l.mu.Unlock()
}

// await reports whether a message of the current run names call, waiting
// up to d for it: an absorbed failure is logged by the goroutine that met
// it (the asynchronous-event reader), maybe just after the run returned.
func (l *logBook) await(call string, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if l.saw(call) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// saw reports whether a message of the current run names call.
func (l *logBook) saw(call string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, call) {
			return true
		}
	}
	return false
}

// failure is how a call fails when injected: the errno it returns (one
// the call really returns; see doc/fault-injection.md) and the rpma error
// the library must turn it into (librpma's mapping).
type failure struct {
	errno syscall.Errno
	want  error
}

// failures is the per-call table; every site's call must be in it.
var failures = map[string]failure{
	"ibv_get_device_list":       {syscall.ENOSYS, rpma.ErrProvider},
	"ibv_open_device":           {syscall.ENOMEM, rpma.ErrProvider},
	"ibv_close_device":          {syscall.EBUSY, nil}, // examples/devinfo: the verbs layer's own error
	"ibv_query_device_ex":       {syscall.EINVAL, rpma.ErrProvider},
	"ibv_query_port":            {syscall.EINVAL, rpma.ErrProvider},
	"ibv_alloc_pd":              {syscall.ENOMEM, rpma.ErrNoMem},
	"ibv_dealloc_pd":            {syscall.EBUSY, rpma.ErrProvider},
	"ibv_create_comp_channel":   {syscall.EMFILE, rpma.ErrProvider},
	"ibv_destroy_comp_channel":  {syscall.EBUSY, rpma.ErrProvider},
	"ibv_get_cq_event":          {syscall.EIO, rpma.ErrNoCompletion}, // as librpma's rpma_cq_wait
	"ibv_req_notify_cq":         {syscall.EINVAL, rpma.ErrProvider},
	"ibv_create_cq":             {syscall.ENOMEM, rpma.ErrProvider},
	"ibv_resize_cq":             {syscall.EINVAL, rpma.ErrProvider},
	"ibv_destroy_cq":            {syscall.EBUSY, rpma.ErrProvider},
	"ibv_poll_cq":               {syscall.EIO, rpma.ErrProvider},
	"calloc":                    {syscall.ENOMEM, rpma.ErrProvider},
	"ibv_reg_mr":                {syscall.ENOMEM, rpma.ErrProvider},
	"ibv_dereg_mr":              {syscall.EBUSY, rpma.ErrProvider},
	"ibv_advise_mr":             {syscall.EINVAL, rpma.ErrInvalidArgument},
	"ibv_post_send":             {syscall.EINVAL, rpma.ErrProvider},
	"ibv_wr_complete":           {syscall.EINVAL, rpma.ErrProvider},
	"ibv_post_recv":             {syscall.EINVAL, rpma.ErrProvider},
	"ibv_post_srq_recv":         {syscall.EINVAL, rpma.ErrProvider},
	"ibv_query_qp":              {syscall.EINVAL, rpma.ErrProvider},
	"ibv_modify_qp":             {syscall.EINVAL, rpma.ErrProvider},
	"ibv_create_srq":            {syscall.ENOMEM, rpma.ErrProvider},
	"ibv_destroy_srq":           {syscall.EBUSY, rpma.ErrProvider},
	"ibv_alloc_mw":              {syscall.ENOMEM, rpma.ErrProvider},
	"ibv_dealloc_mw":            {syscall.EBUSY, rpma.ErrProvider},
	"ibv_get_async_event":       {syscall.EIO, rpma.ErrProvider},
	"rdma_getaddrinfo":          {syscall.ENOMEM, rpma.ErrProvider},
	"rdma_create_event_channel": {syscall.EMFILE, rpma.ErrProvider},
	"rdma_get_cm_event":         {syscall.EIO, rpma.ErrProvider},
	"rdma_ack_cm_event":         {syscall.EINVAL, rpma.ErrProvider},
	"rdma_create_id":            {syscall.ENOMEM, rpma.ErrProvider},
	"rdma_destroy_id":           {syscall.EBUSY, rpma.ErrProvider},
	"rdma_bind_addr":            {syscall.EADDRINUSE, rpma.ErrProvider},
	"rdma_resolve_addr":         {syscall.EADDRNOTAVAIL, rpma.ErrProvider},
	"rdma_resolve_route":        {syscall.ENETUNREACH, rpma.ErrProvider},
	"rdma_listen":               {syscall.EADDRINUSE, rpma.ErrProvider},
	"rdma_connect":              {syscall.EINVAL, rpma.ErrProvider},
	"rdma_accept":               {syscall.EINVAL, rpma.ErrProvider},
	"rdma_reject":               {syscall.EINVAL, rpma.ErrProvider},
	"rdma_disconnect":           {syscall.EINVAL, rpma.ErrProvider},
	"rdma_set_option":           {syscall.EINVAL, rpma.ErrProvider},
	"rdma_notify":               {syscall.EINVAL, rpma.ErrProvider},
	"rdma_migrate_id":           {syscall.EINVAL, rpma.ErrProvider},
	"rdma_create_qp_ex":         {syscall.ENOMEM, rpma.ErrProvider},
	"epoll_create1":             {syscall.EMFILE, rpma.ErrProvider},
	"epoll_ctl":                 {syscall.ENOMEM, rpma.ErrProvider},
	"eventfd":                   {syscall.EMFILE, rpma.ErrProvider},
	"fcntl":                     {syscall.EBADF, rpma.ErrProvider},
	"mmap":                      {syscall.ENOMEM, rpma.ErrNoMem},
}

// absorbed lists the sites whose failure a sequence may survive, and
// why: the library retries or does without, by design. Unless silent is
// set, such a failure must be logged, naming the call.
var absorbed = map[string]struct {
	why    string
	silent bool
}{
	"POLL_CQ":            {"the poll a post makes after posting (the reap) drops a failure: the next GetWC polls again and reports it", true},
	"GET_ASYNC_EVENT":    {"the device's asynchronous events are read beside every call: a failed read is logged and reading stops", false},
	"FCNTL_NONBLOCK_DUP": {"the first is the asynchronous-event watcher's: a device it cannot watch still works, logged", false},
	"FCNTL_DUPFD":        {"the first is the asynchronous-event watcher's: a device it cannot watch still works, logged", false},
}

// absorbedFirst lists the sites whose first occurrence in every
// sequence is absorbed by design (each sequence starts with
// DeviceForAddress), and why.
var absorbedFirst = map[string]string{
	"DESTROY_ID": "DeviceForAddress destroys its resolving id a second time when the first fails (a second failure is reported)",
}

// maxK bounds the occurrences of one site failed in one sequence: loops
// (polls, event reads) reach some sites many times.
const maxK = 2

// point is one failure to inject: the k-th occurrence of a site.
type point struct {
	site int
	k    int64
}

// outcome of one injected run.
type outcome struct {
	reached bool   // the point was reached (the injection fired)
	report  string // what is wrong, "" when all is well
}

func TestReplay(t *testing.T) {
	ip := rdmatest.IP(t)
	e := &env{ip: ip, servePort: "7471", connectPort: "7472"}
	startCounterpart(t, "serve", ip, e.servePort)
	startCounterpart(t, "connect", ip, e.connectPort)
	sites := ibv.InjectSites()
	if n := sitesInSource(t); n != len(sites) {
		t.Fatalf("the sources have %d injection sites, the list %d", n, len(sites))
	}

	// Warm up (librdmacm and libibverbs open process-wide files on
	// first use), then take the baseline every run must return to.
	for _, seq := range sequences {
		if err := runClean(seq, e); err != nil {
			t.Fatalf("%s without injection: %v", seq.name, err)
		}
	}
	base := leak.Take()

	covered := map[int]bool{}
	reached := map[int]bool{}
	points := 0
	var failures []string // repeated after the summary: CI shows a log's tail
	start := time.Now()
	for _, seq := range sequences {
		pts, err := record(seq, e)
		if err != nil {
			t.Fatalf("%s, recording: %v", seq.name, err)
		}
		for _, pt := range pts {
			points++
			began := time.Now()
			o := inject(t, seq, e, pt, base)
			if testing.Verbose() {
				t.Logf("%s, %s #%d: reached %v, %v", seq.name, sites[pt.site].Name, pt.k, o.reached, time.Since(began).Round(time.Millisecond))
			}
			if !o.reached {
				continue
			}
			reached[pt.site] = true
			if o.report != "" {
				msg := fmt.Sprintf("%s, %s #%d: %s", seq.name, sites[pt.site].Name, pt.k, o.report)
				failures = append(failures, msg)
				t.Error(msg)
				base = leak.Take() // judge the next points on their own
				continue
			}
			covered[pt.site] = true
		}
	}

	excluded := map[int]string{}
	for i, s := range sites {
		if covered[i] {
			continue
		}
		if why := exclusion(s, e); why != "" {
			excluded[i] = why
		} else if !reached[i] {
			t.Errorf("site %s (%s) was reached by no sequence", s.Name, s.Call)
		}
	}
	var ex []string
	for i, why := range excluded {
		ex = append(ex, fmt.Sprintf("  excluded %s (%s): %s", sites[i].Name, sites[i].Call, why))
	}
	sort.Strings(ex)
	for _, l := range ex {
		fmt.Println(l)
	}
	fmt.Printf("inject: sites=%d covered=%d excluded=%d points=%d failed=%d (%.0f s)\n",
		len(sites), len(covered), len(excluded), points, len(failures), time.Since(start).Seconds())
	for _, f := range failures {
		fmt.Println("inject: failed point:", f)
	}
	if len(covered)+len(excluded) != len(sites) {
		t.Errorf("covered %d + excluded %d != sites %d", len(covered), len(excluded), len(sites))
	}
}

// sitesInSource counts the injection sites in the sources themselves:
// the C sites (RPMA_INJECT(NAME) in internal/ibv) and the Go-side ones
// (an ibv.GoSiteEpollCreate1 or a sibling in internal/core), each use once.
func sitesInSource(t *testing.T) int {
	n := 0
	for _, src := range []struct {
		dir string
		re  *regexp.Regexp
	}{
		{"../ibv", regexp.MustCompile(`RPMA_INJECT\([A-Z0-9_]+\)`)},
		{"../core", regexp.MustCompile(`\bibv\.GoSite[A-Za-z0-9]+\b`)},
	} {
		files, err := os.ReadDir(src.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			if strings.HasSuffix(name, "_test.go") || !(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".h")) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src.dir, name))
			if err != nil {
				t.Fatal(err)
			}
			n += len(src.re.FindAll(b, -1))
		}
	}
	return n
}

// exclusion says why a site cannot be reached on this build and kernel,
// "" when it must be.
func exclusion(s ibv.InjectSite, e *env) string {
	switch {
	case !ibv.HaveWRFlush && strings.Contains(s.Name, "FLUSH"):
		return "compiled out: this build has no native flush (rdma-core < 45)"
	case e.nativeFlush && s.Name == "POST_SEND_WRITE_READ":
		return "capability: flush is native on this build and device, never emulated"
	case e.nativeAtomicWrite && s.Name == "POST_SEND_INLINE8":
		return "capability: atomic write is native on this kernel, never emulated"
	case !e.nativeAtomicWrite && s.Name == "WR_COMPLETE_ATOMIC_WRITE":
		return "capability: this kernel's rxe has no native atomic write"
	case s.Name == "QUERY_QP":
		return "reached only after a post failed, to tell why: a second failure in one run"
	case s.Name == "MODIFY_QP":
		return "reached only when a PeerTimeout expires (a vanished peer: internal/faults runs it)"
	case s.Name == "NOTIFY":
		return "reached only when rxe reports IBV_EVENT_COMM_EST (a packet before the RTU), which no sequence can cause"
	}
	return ""
}

// runClean runs seq without injection and closes what it opened.
func runClean(seq sequence, e *env) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var s scope
	err := seq.run(ctx, e, &s)
	for _, cerr := range closeAll(&s) {
		err = errors.Join(err, cerr.first)
	}
	return err
}

// record runs seq once, uninjected, and returns the points it reached.
func record(seq sequence, e *env) ([]point, error) {
	ibv.InjectReset()
	if err := runClean(seq, e); err != nil {
		return nil, err
	}
	var pts []point
	for site, n := range ibv.InjectCounts() {
		for k := int64(1); k <= n && k <= maxK; k++ {
			pts = append(pts, point{site, k})
		}
	}
	return pts, nil
}

// closeError is a Close that failed: its first error, and the retry's.
type closeError struct {
	name         string
	first, retry error
}

// closeAll closes what s holds, last first; a Close that fails is
// retried once.
func closeAll(s *scope) []closeError {
	var out []closeError
	for i := len(s.closers) - 1; i >= 0; i-- {
		c := s.closers[i]
		if err := c.close(); err != nil {
			out = append(out, closeError{c.name, err, c.close()})
		}
	}
	s.closers = nil
	return out
}

// inject runs seq with pt armed and judges the outcome.
func inject(t *testing.T, seq sequence, e *env, pt point, base leak.Snapshot) outcome {
	site := ibv.InjectSites()[pt.site]
	f, ok := failures[site.Call]
	if !ok {
		return outcome{true, fmt.Sprintf("no failure in the table for %s", site.Call)}
	}
	ibv.InjectReset()
	logs.reset()
	ibv.InjectArm(pt.site, pt.k, f.errno)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	var s scope
	began := time.Now()
	err := seq.run(ctx, e, &s)
	cancel()
	closes := closeAll(&s)
	fired := ibv.InjectFired()
	ibv.InjectReset()
	if !fired {
		return outcome{}
	}
	var problems []string
	// The injected failure must come back, typed, from the run or from
	// a Close; a Close that failed must succeed when retried.
	var got error
	if err != nil {
		got = err
	}
	for _, c := range closes {
		if c.retry != nil {
			problems = append(problems, fmt.Sprintf("%s failed (%v) and failed again when retried: %v", c.name, c.first, c.retry))
		}
		if got == nil {
			got = c.first
		} else if err == nil {
			problems = append(problems, fmt.Sprintf("a second Close failed: %s: %v", c.name, c.first))
		}
	}
	switch {
	case got == nil:
		a, ok := absorbed[site.Name]
		if _, first := absorbedFirst[site.Name]; first && pt.k == 1 {
			ok = true
		}
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("the injected %v of %s vanished: the sequence succeeded", f.errno, site.Call))
		case !a.silent && !logs.await(site.Call, 5*time.Second):
			problems = append(problems, fmt.Sprintf("the injected %v of %s was absorbed without a log line naming it", f.errno, site.Call))
		}
	default:
		if seq.raw {
			f.want = nil
		}
		if msg := judge(got, site.Call, f); msg != "" {
			problems = append(problems, msg)
		}
	}
	if d := time.Since(began); d > 20*time.Second {
		problems = append(problems, fmt.Sprintf("took %v", d.Round(time.Millisecond)))
	}
	if grown := settle(base); grown != "" {
		problems = append(problems, "leaked: "+grown)
		for _, l := range leak.Live() {
			t.Log(l)
		}
	}
	// A fresh run must succeed, and leave nothing behind either.
	if err := runClean(seq, e); err != nil {
		problems = append(problems, fmt.Sprintf("the fresh run after it failed: %v", err))
	} else if grown := settle(base); grown != "" {
		problems = append(problems, "the fresh run after it leaked: "+grown)
	}
	if len(problems) > 0 {
		return outcome{true, fmt.Sprintf("injected %v: got %v; %s", f.errno, got, strings.Join(problems, "; "))}
	}
	return outcome{reached: true}
}

// judge checks that err is the injected failure of call as the library
// must report it: the rpma kind of the table, the call's name and the
// errno.
func judge(err error, call string, f failure) string {
	var miss []string
	if f.want != nil && !errors.Is(err, f.want) {
		miss = append(miss, fmt.Sprintf("does not match %v", f.want))
	}
	if !errors.Is(err, f.errno) {
		miss = append(miss, fmt.Sprintf("does not carry %v", f.errno))
	}
	if !strings.Contains(err.Error(), call) {
		miss = append(miss, fmt.Sprintf("does not name %s", call))
	}
	if len(miss) == 0 {
		return ""
	}
	return "the error " + strings.Join(miss, ", ")
}

// settle returns what the process holds beyond base, giving the runtime
// a moment for what closes asynchronously (the poller's fds).
func settle(base leak.Snapshot) string {
	var grown string
	for i := 0; i < 20; i++ {
		if grown = leak.Take().Grown(base); grown == "" {
			return ""
		}
		time.Sleep(50 * time.Millisecond)
	}
	return grown
}
