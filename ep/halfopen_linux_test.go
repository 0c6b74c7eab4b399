//go:build linux && cgo

package ep_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/rpma"
)

func init() { helpers["halfopen"] = halfOpenClient }

// halfOpenSlack bounds how long after its bound an accepted connection's
// LOST may come (a timer's lateness under make test's load).
const halfOpenSlack = 5 * time.Second

// TestIntegrationHalfOpenHandshakes: a second process connects clients
// that never complete the handshake (they never read their events, so
// librdmacm never sends the RTU, and rdma_cm gives the accepting side no
// event at all). Every connection the server accepts is lost within its
// bound (PeerTimeout, or EstablishTimeout), with a cause that names the
// bound; closed, it gives back every fd. MaxEstablishing caps how many
// the server holds: the requests beyond it are rejected. The control
// (NoEstablishTimeout, librpma's behaviour) shows what the test catches:
// the accepted connections get no event.
func TestIntegrationHalfOpenHandshakes(t *testing.T) {
	p, ip := newPeer(t)
	for _, tc := range []struct {
		name     string
		clients  int
		cfg      conn.Config
		maxEstab int
		bound    time.Duration // 0: none
		field    string
		accepted int
	}{
		{name: "PeerTimeout", clients: 40, cfg: conn.Config{PeerTimeout: time.Second}, bound: time.Second, field: "PeerTimeout", accepted: 40},
		{name: "EstablishTimeout", clients: 40, cfg: conn.Config{EstablishTimeout: time.Second}, bound: time.Second, field: "EstablishTimeout", accepted: 40},
		{name: "MaxEstablishing", clients: 10, maxEstab: 4, cfg: conn.Config{EstablishTimeout: 3 * time.Second}, bound: 3 * time.Second, field: "EstablishTimeout", accepted: 4},
		{name: "NoEstablishTimeout", clients: 4, cfg: conn.Config{EstablishTimeout: conn.NoEstablishTimeout}, accepted: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e, err := (&ep.Config{MaxEstablishing: tc.maxEstab}).Listen(p, ip, "0")
			require.NoError(t, err)
			defer func() { require.NoError(t, e.Shutdown()) }()
			base := leak.OpenFDs()

			// The clients' process.
			cmd := exec.CommandContext(ctx, os.Args[0])
			cmd.Env = append(os.Environ(), helperEnv+"=halfopen", "RPMA_HALFOPEN_PORT="+e.Port(),
				"RPMA_HALFOPEN_CLIENTS="+strconv.Itoa(tc.clients))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			defer cmd.Wait()    //nolint:errcheck // checked below; this one reaps on failure
			defer stdin.Close() // ends the clients' process on failure
			lines := bufio.NewScanner(stdout)

			// The application: it accepts every request it pulls, and
			// waits for each connection's first event.
			type outcome struct {
				ev       rpma.ConnEvent
				err      error // NextEvent's
				waitErr  error // a completion wait's after the event
				closeErr error
				after    time.Duration
			}
			outcomes := make(chan outcome, tc.clients)
			pullCtx, stopPulling := context.WithCancel(ctx)
			var pulling sync.WaitGroup
			pulling.Add(1)
			go func() {
				defer pulling.Done()
				var conns sync.WaitGroup
				defer conns.Wait()
				for {
					r, err := e.NextConnReq(pullCtx, &tc.cfg)
					if err != nil {
						return
					}
					start := time.Now()
					c, err := r.Connect(nil)
					if err != nil {
						outcomes <- outcome{err: err}
						continue
					}
					conns.Add(1)
					go func() {
						defer conns.Done()
						evCtx := ctx
						if tc.bound == 0 {
							// The control: no bound, so no event; wait 3 s.
							var cancel context.CancelFunc
							evCtx, cancel = context.WithTimeout(ctx, 3*time.Second)
							defer cancel()
						}
						ev, err := c.NextEvent(evCtx)
						o := outcome{ev: ev, err: err, after: time.Since(start)}
						if err == nil {
							o.waitErr = c.CQ().Wait(ctx)
						}
						o.closeErr = c.Close()
						outcomes <- o
					}()
				}
			}()

			require.True(t, lines.Scan(), "the clients' process: %s", &stderr)
			require.Equal(t, "connected", lines.Text())
			if tc.bound == 0 {
				// Accepted, and counted until each is closed.
				deadline := time.Now().Add(halfOpenSlack)
				for e.Establishing() < tc.accepted && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				require.Equal(t, tc.accepted, e.Establishing())
			}
			// Each accepted connection ends within its bound of its accept
			// (the control's, within its 3 s wait); the accepts come within
			// seconds of the clients' connects.
			endBy := time.After(tc.bound + halfOpenSlack + 10*time.Second)
			for i := range tc.accepted {
				var o outcome
				select {
				case o = <-outcomes:
				case <-endBy:
					t.Fatalf("%d of %d accepted connections ended", i, tc.accepted)
				}
				require.NoError(t, o.closeErr)
				if tc.bound == 0 {
					require.ErrorIs(t, o.err, context.DeadlineExceeded, "no event without a bound (librpma's behaviour)")
					continue
				}
				require.NoError(t, o.err)
				require.Equal(t, rpma.ConnLost, o.ev)
				require.GreaterOrEqual(t, o.after, tc.bound, "lost before its bound")
				require.LessOrEqual(t, o.after, tc.bound+halfOpenSlack, "lost long after its bound")
				var ce *rpma.ConnEventError
				require.ErrorAs(t, o.waitErr, &ce)
				require.Equal(t, rpma.ConnLost, ce.Event)
				require.ErrorIs(t, o.waitErr, rpma.ErrPeerTimeout)
				require.ErrorContains(t, o.waitErr, "did not complete the handshake within "+tc.bound.String()+" (conn.Config."+tc.field+")")
			}
			stopPulling()
			pulling.Wait()
			require.Len(t, outcomes, 0, "more connections accepted than the cap")
			require.Zero(t, e.Establishing())
			require.EqualValues(t, tc.clients-tc.accepted, e.Refused())

			// The clients' side: the refused ones saw REJECTED.
			_, err = io.WriteString(stdin, "report\n")
			require.NoError(t, err)
			require.True(t, lines.Scan(), "the clients' process: %s", &stderr)
			var events map[string]int
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(lines.Text(), "result ")), &events))
			t.Logf("clients' first events: %v", events)
			require.Equal(t, tc.clients-tc.accepted, events[rpma.ConnRejected.String()])
			require.NoError(t, stdin.Close())
			require.NoError(t, cmd.Wait(), "the clients' process: %s", &stderr)

			// Every fd the accepted connections held is back.
			deadline := time.Now().Add(5 * time.Second)
			for leak.OpenFDs() > base && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.LessOrEqual(t, leak.OpenFDs(), base, "the server's fds return to their baseline")
		})
	}
}

// halfOpenClient connects RPMA_HALFOPEN_CLIENTS clients that never read
// their events, prints "connected", and on a line "report" reads each
// one's first event and prints "result {event: count}"; it closes them
// and exits when its stdin ends.
func halfOpenClient() int {
	ip, port := os.Getenv(rdmatest.EnvIP), os.Getenv("RPMA_HALFOPEN_PORT")
	n, err := strconv.Atoi(os.Getenv("RPMA_HALFOPEN_CLIENTS"))
	if err != nil {
		return helperFail(err)
	}
	p, closePeer, err := helperPeer(ip)
	if err != nil {
		return helperFail(err)
	}
	defer closePeer()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := &conn.Config{CQSize: 2, SQSize: 1, RQSize: 1}
	var conns []*conn.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		req, err := conn.NewRequest(ctx, p, ip, port, cfg)
		if err != nil {
			return helperFail(err)
		}
		c, err := req.Connect(nil)
		if err != nil {
			return helperFail(err)
		}
		conns = append(conns, c)
	}
	fmt.Println("connected")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "report" {
			continue
		}
		events := map[string]int{}
		for _, c := range conns {
			ectx, cancel := context.WithTimeout(ctx, time.Second)
			ev, err := c.NextEvent(ectx)
			cancel()
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				events["none"]++
			case err != nil:
				events[err.Error()]++
			default:
				events[ev.String()]++
			}
		}
		b, err := json.Marshal(events)
		if err != nil {
			return helperFail(err)
		}
		fmt.Println("result " + string(b))
	}
	return 0
}
