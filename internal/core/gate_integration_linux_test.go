//go:build linux && cgo

package core

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/rpma"
)

// epollWatches reports whether w's epoll instance has fd among its items,
// as /proc/self/fdinfo lists them ("tfd: N ...").
func epollWatches(t *testing.T, w *waiter, fd int) bool {
	t.Helper()
	epfd := -1
	require.NoError(t, w.rc.Control(func(f uintptr) { epfd = int(f) }))
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", epfd))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "tfd:" {
			if n, err := strconv.Atoi(f[1]); err == nil && n == fd {
				return true
			}
		}
	}
	return false
}

// TestIntegrationCompletionGate: a CQ waiter's epoll instance watches the
// completion channel only while waits park (gate.go): not before the first
// park, and no longer after gateIdleMax events read without one, so that
// events stop waking the runtime's poller thread; a wait that parks puts
// it back before parking and still ends when its completion comes; with
// gating off (the control) the channel stays watched.
func TestIntegrationCompletionGate(t *testing.T) {
	p, ip := testPeer(t)
	client, _ := testPair(t, p, ip, nil)
	q := client.CQ()
	ctx := testCtx(t)
	var wcs [4]WC
	drain := func() {
		for n := 0; n < 1; {
			got, err := q.GetWC(wcs[:])
			if got == 0 {
				require.ErrorIs(t, err, rpma.ErrNoCompletion)
			}
			n += got
		}
	}
	readWithoutPark := func() {
		for i := 0; i < gateIdleMax; i++ {
			require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 1))
			rdmatest.AwaitReadable(t, q.FD(), 10*time.Second)
			require.NoError(t, q.Wait(ctx))
			drain()
		}
	}
	watched := func() bool { return epollWatches(t, q.w, q.FD()) }
	parkedWait := func(opContext uint64) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- q.Wait(ctx) }()
		require.Eventually(t, watched, 10*time.Second, time.Millisecond, "a wait that parks watches the channel")
		require.NoError(t, client.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, opContext))
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the parked wait missed its completion")
		}
		drain()
		require.True(t, watched(), "the channel stays watched after a park")
	}
	require.False(t, watched(), "a new CQ's channel is not watched until a wait parks")
	parkedWait(1)
	readWithoutPark()
	require.False(t, watched(), "after %d events read without a park the channel leaves the epoll", gateIdleMax)
	parkedWait(2)

	// The control: a connection of a peer whose tuning turns the gating
	// off watches its channel from the start and after events read
	// without a park.
	p2, _ := testPeer(t)
	p2.SetTuning(Tuning{NoGate: true})
	client, _ = testPair(t, p2, ip, nil)
	q = client.CQ()
	require.True(t, watched(), "control: with gating off a new CQ's channel is watched")
	readWithoutPark()
	require.True(t, watched(), "control: with gating off the channel stays watched")
}
