//go:build linux && cgo

package conn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// epollLoop is a level-triggered epoll set, as an application's event
// loop (librpma's examples 06 and 12) has one.
type epollLoop struct {
	t    *testing.T
	epfd int
	name map[int32]string
}

func newEpollLoop(t *testing.T) *epollLoop {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(epfd) })
	return &epollLoop{t: t, epfd: epfd, name: map[int32]string{}}
}

func (l *epollLoop) add(name string, fd int) {
	require.GreaterOrEqual(l.t, fd, 0, name)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	require.NoError(l.t, unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev), name)
	l.name[int32(fd)] = name
}

func (l *epollLoop) del(fd int) {
	require.NoError(l.t, unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil))
	delete(l.name, int32(fd))
}

// ready returns the names of the readable fds, waiting up to timeout for
// the first.
func (l *epollLoop) ready(timeout time.Duration) map[string]bool {
	var evs [16]unix.EpollEvent
	for {
		n, err := unix.EpollWait(l.epfd, evs[:], int(timeout/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		require.NoError(l.t, err)
		got := map[string]bool{}
		for _, e := range evs[:n] {
			got[l.name[e.Fd]] = true
		}
		return got
	}
}

// next waits (bounded) until name is readable; other readable fds are
// returned too, for the caller to serve.
func (l *epollLoop) next(name string) map[string]bool {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if r := l.ready(time.Second); r[name] {
			return r
		}
	}
	l.t.Fatalf("%s did not become readable within 30 s", name)
	return nil
}

// quiet checks that none of names is readable (a level-triggered loop
// would spin on it).
func (l *epollLoop) quiet(names ...string) {
	r := l.ready(0)
	for _, n := range names {
		require.False(l.t, r[n], "%s is still readable", n)
	}
}

// TestIntegrationEventLoop drives a connection end to end from one
// level-triggered epoll loop per side, with the non-blocking tries: the
// endpoint's fd and TryNextConnReq, the event fds and TryNextEvent, the
// CQ fds and TryWait. After each try that consumed what made an fd
// readable, the fd is quiet. In the middle, the peer disconnects while a
// blocking CQ wait runs: the wait ends on the CLOSED event, and the event
// fd still becomes readable for it.
func TestIntegrationEventLoop(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	srv := newEpollLoop(t)
	cli := newEpollLoop(t)
	srv.add("endpoint", e.FD())

	_, err := e.TryNextConnReq(nil)
	require.ErrorIs(t, err, rpma.ErrNoEvent, "nothing pending yet")
	req, err := conn.NewRequest(ctx, p, ip, e.Port(), nil)
	require.NoError(t, err)
	client, err := req.Connect(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close()) }()

	srv.next("endpoint")
	sreq, err := e.TryNextConnReq(nil)
	require.NoError(t, err)
	server, err := sreq.Connect(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, server.Close()) }()
	srv.quiet("endpoint")
	srv.add("server events", server.EventFD())
	srv.add("server CQ", server.CQ().FD())
	cli.add("client events", client.EventFD())
	cli.add("client CQ", client.CQ().FD())

	cli.next("client events")
	ev, err := client.TryNextEvent()
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	cli.quiet("client events")
	_, err = client.TryNextEvent()
	require.ErrorIs(t, err, rpma.ErrNoEvent)
	srv.next("server events")
	ev, err = server.TryNextEvent()
	require.NoError(t, err)
	require.Equal(t, rpma.ConnEstablished, ev)
	srv.quiet("server events")

	// Completions through the loop: CQ fd readable, TryWait, GetWC.
	require.ErrorIs(t, client.CQ().TryWait(), rpma.ErrNoCompletion)
	var wcs [4]cq.WC
	for i := 0; i < 20; i++ {
		require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(100+i)))
		got := false
		for !got {
			cli.next("client CQ")
			require.NoError(t, client.CQ().TryWait())
			for {
				n, err := client.CQ().GetWC(wcs[:])
				if errors.Is(err, rpma.ErrNoCompletion) {
					break
				}
				require.NoError(t, err)
				for _, wc := range wcs[:n] {
					require.NoError(t, wc.Err())
					require.Equal(t, uint64(100+i), wc.OpContext)
					got = true
				}
			}
		}
		cli.quiet("client CQ")
	}

	// The peer disconnects while a blocking CQ wait runs: the wait reads
	// the CLOSED event (and ends on it); the event fd must still tell.
	waited := make(chan error, 1)
	go func() { waited <- client.CQ().Wait(ctx) }()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, server.Disconnect())
	select {
	case err := <-waited:
		var cerr *rpma.ConnEventError
		require.ErrorAs(t, err, &cerr)
		require.Equal(t, rpma.ConnClosed, cerr.Event)
	case <-time.After(30 * time.Second):
		t.Fatal("the CQ wait did not end on the disconnect")
	}
	cli.next("client events")
	ev, err = client.TryNextEvent()
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
	cli.quiet("client events")
	require.NoError(t, client.Disconnect())

	srv.next("server events")
	ev, err = server.TryNextEvent()
	require.NoError(t, err)
	require.Equal(t, rpma.ConnClosed, ev)
	srv.quiet("server events")

	// Once closed, the fds are gone: take them out of the loops first.
	cli.del(client.EventFD())
	cli.del(client.CQ().FD())
	srv.del(server.EventFD())
	srv.del(server.CQ().FD())
	_ = context.Background
}
