//go:build linux && cgo

package ep_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

func init() { helpers["flood"] = floodClient }

// The flood: floodRequests requests, floodParallel at a time, from a
// second process, against an endpoint that lets floodCap requests be
// undecided.
const (
	floodRequests = 500
	floodParallel = 32
	floodCap      = 4
	// floodEventBound bounds each client's wait for its request's outcome.
	// The held requests' clients wait for the whole flood (13-16 s on a
	// quiet host, 25-31 s under make test's load), so it is generous; a
	// client whose wait ends gives up its request, which the server then
	// cannot reject.
	floodEventBound = 2 * time.Minute
)

// floodResult is what the flood's client process reports.
type floodResult struct {
	Events map[string]int // outcome of each request: its first event, or the error
	// The slowest outcomes, in ms: of all requests but the floodCap
	// slowest (the held ones), and of all.
	MaxMsExceptHeld, MaxMs int64
	MedianMs               int64
}

// fdsPerUndecided is what an undecided request holds: its event channel
// and the poller's dup of it, and the connection events' two eventfds,
// epoll and its dup. No CQ channel: queues are created on Connect.
const fdsPerUndecided = 6

// TestIntegrationFloodOfRequests: a second process sends 500 connection
// requests, 32 at a time, to an endpoint with MaxUndecided 4 whose
// application pulls requests and decides none. The first 4 stay
// undecided; every other one is rejected as it arrives, and its client
// sees REJECTED (not the silence of a dropped request); the server's fds
// never grow past 4 requests' worth. When the 4 are closed their clients
// see REJECTED too, and nothing leaks.
func TestIntegrationFloodOfRequests(t *testing.T) {
	p, ip := newPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*floodEventBound+time.Minute)
	defer cancel()
	e, err := (&ep.Config{Backlog: 64, MaxUndecided: floodCap}).Listen(p, ip, "0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Shutdown()) }()

	base := leak.OpenFDs()
	var maxFDs, maxUndecided atomic.Int64
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			if n := int64(leak.OpenFDs()); n > maxFDs.Load() {
				maxFDs.Store(n)
			}
			if n := int64(e.Undecided()); n > maxUndecided.Load() {
				maxUndecided.Store(n)
			}
		}
	}()

	// The application: it pulls requests and holds them.
	held := make(chan *conn.ConnReq, floodRequests)
	pulled := make(chan error, 1)
	go func() {
		for {
			r, err := e.NextConnReq(ctx, nil)
			if err != nil {
				pulled <- err
				return
			}
			held <- r
		}
	}()

	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=flood", "RPMA_FLOOD_PORT="+e.Port())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var res floodResult
	var closedHeld int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.Equal(line, []byte("waiting")):
			// Every request but those held has its outcome.
			for closedHeld < floodCap {
				select {
				case r := <-held:
					require.NoError(t, r.Close())
					closedHeld++
				case <-ctx.Done():
					t.Fatalf("the application holds %d requests, not %d", closedHeld, floodCap)
				}
			}
		case bytes.HasPrefix(line, []byte("result ")):
			require.NoError(t, json.Unmarshal(line[len("result "):], &res))
		default:
			t.Logf("client: %s", line)
		}
	}
	werr := cmd.Wait()
	close(stopSampling)
	sampling.Wait()
	require.NoError(t, werr, "the flood's client: %s", stderr.String())
	t.Logf("outcomes %v; slowest %d ms (all but the held: %d ms), median %d ms; refused %d; fds %d -> at most %d; undecided at most %d",
		res.Events, res.MaxMs, res.MaxMsExceptHeld, res.MedianMs, e.Refused(), base, maxFDs.Load(), maxUndecided.Load())

	require.Equal(t, map[string]int{rpma.ConnRejected.String(): floodRequests}, res.Events,
		"every request is rejected: by the cap as it arrives, or, for the held ones, by their Close")
	require.Equal(t, floodCap, closedHeld)
	require.Len(t, held, 0, "the cap held")
	require.EqualValues(t, floodCap, maxUndecided.Load())
	require.EqualValues(t, floodRequests-floodCap, e.Refused())
	require.Zero(t, e.Undecided())
	require.LessOrEqual(t, maxFDs.Load()-int64(base), int64((floodCap+1)*fdsPerUndecided),
		"the server holds at most %d requests' fds", floodCap)
	cancel()
	require.ErrorIs(t, <-pulled, context.Canceled)
}

// floodClient is the flood's client process: it prints "waiting" when
// every request but floodCap has its outcome, then "result {json}".
func floodClient() int {
	ip, port := os.Getenv(rdmatest.EnvIP), os.Getenv("RPMA_FLOOD_PORT")
	p, closePeer, err := helperPeer(ip)
	if err != nil {
		return helperFail(err)
	}
	defer closePeer()
	cfg := conn.DefaultConfig()
	cfg.CQSize, cfg.SQSize, cfg.RQSize = 2, 1, 1

	var (
		mu     sync.Mutex
		events = map[string]int{}
		ms     []int64
		done   int
	)
	outcome := func() (string, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), floodEventBound)
		defer cancel()
		start := time.Now()
		req, err := conn.NewRequest(ctx, p, ip, port, cfg)
		if err != nil {
			return "NewRequest: " + err.Error(), time.Since(start)
		}
		c, err := req.Connect(nil)
		if err != nil {
			return "Connect: " + err.Error(), time.Since(start)
		}
		defer c.Close()
		ev, err := c.NextEvent(ctx)
		if err != nil {
			return "NextEvent: " + err.Error(), time.Since(start)
		}
		return ev.String(), time.Since(start)
	}
	// More unanswered requests than the held ones: the cap failed; stop
	// sending, so that the test fails in one floodEventBound.
	var unanswered atomic.Int32
	next := make(chan struct{})
	go func() {
		for range floodRequests {
			if unanswered.Load() > floodCap {
				break
			}
			next <- struct{}{}
		}
		close(next)
	}()
	var wg sync.WaitGroup
	for range floodParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				ev, d := outcome()
				if d >= floodEventBound {
					unanswered.Add(1)
				}
				mu.Lock()
				events[ev]++
				ms = append(ms, d.Milliseconds())
				done++
				if done == floodRequests-floodCap {
					fmt.Println("waiting")
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(ms)
	res := floodResult{Events: events, MaxMs: ms[len(ms)-1], MedianMs: ms[len(ms)/2]}
	if len(ms) > floodCap {
		res.MaxMsExceptHeld = ms[len(ms)-1-floodCap]
	}
	b, err := json.Marshal(res)
	if err != nil {
		return helperFail(err)
	}
	fmt.Println("result " + string(b))
	return 0
}

// TestIntegrationRequestQueuesOnAccept: an incoming request holds no
// queues until it is accepted or a receive is posted on it: pulling one
// costs at most its event channel's fds, posting a receive creates its CQ
// (with its completion channel), and both requests connect and work.
func TestIntegrationRequestQueuesOnAccept(t *testing.T) {
	p, ip := newPeer(t)
	ctx := testCtx(t)
	e, err := (&ep.Config{MaxUndecided: 2}).Listen(p, ip, "0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Shutdown()) }()

	var clients []*conn.Conn
	defer func() {
		for _, c := range clients {
			require.NoError(t, c.Close())
		}
	}()
	request := func() *conn.ConnReq {
		t.Helper()
		req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
		require.NoError(t, err)
		c, err := req.Connect([]byte("client"))
		require.NoError(t, err)
		clients = append(clients, c)
		before := leak.OpenFDs()
		r, err := e.NextConnReq(ctx, nil)
		require.NoError(t, err)
		// At most: the client's side may close an fd meanwhile (seen: 5).
		d := leak.OpenFDs() - before
		require.True(t, d > 0 && d <= fdsPerUndecided, "an undecided request's fds: %d", d)
		return r
	}

	r1 := request()
	r2 := request()
	require.Equal(t, 2, e.Undecided())

	in, inBytes := fixture.Region(t, p, 8, mr.UsageRecv)
	before := leak.OpenFDs()
	require.NoError(t, r2.Recv(in, 0, 8, 7))
	require.Greater(t, leak.OpenFDs()-before, 0, "Recv created the request's CQ and completion channel")

	var servers []*conn.Conn
	for i, r := range []*conn.ConnReq{r1, r2} {
		s, err := r.Connect(nil)
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close()) }()
		servers = append(servers, s)
		// The client's rdma_cm sends the RTU that establishes the server's
		// side when the client reads its event (librdmacm completes the
		// connection in rdma_get_cm_event): the client first.
		ev, err := clients[i].NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev, "client %d", i+1)
		ev, err = s.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, rpma.ConnEstablished, ev, "request %d", i+1)
	}
	require.Zero(t, e.Undecided())

	// The receive posted before the connection existed takes the second
	// client's first message.
	out, outBytes := fixture.Region(t, p, 8, mr.UsageSend)
	copy(outBytes, "request2")
	require.NoError(t, clients[1].Send(out, 0, 8, rpma.CompletionAlways, 1))
	_, err = session.WaitFor(ctx, clients[1].CQ(), 1)
	require.NoError(t, err)
	wc, err := session.WaitFor(ctx, servers[1].CQ(), 7)
	require.NoError(t, err)
	require.Equal(t, "request2", string(inBytes[:wc.ByteLen]))
}
