//go:build linux

package vm

import (
	"bufio"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heldMachine is a Machine with a control stream and a run directory but
// no VM: the test plays its guest with awaitStart on the stream's other end.
func heldMachine(t *testing.T, index int) *Machine {
	s, err := newStreams()
	require.NoError(t, err)
	t.Cleanup(s.closeAll)
	return &Machine{Index: index, runDir: t.TempDir(), st: s, done: make(chan struct{})}
}

type startResult struct {
	start  bool
	status int
	err    error
}

// playGuest runs awaitStart as m's guest would and reports its result.
func playGuest(m *Machine) <-chan startResult {
	c := make(chan startResult, 1)
	go func() {
		start, status, err := awaitStart(bufio.NewScanner(m.st.child[streamCtl]), m.runDir)
		c <- startResult{start, status, err}
	}()
	return c
}

func waitReady(t *testing.T, m *Machine) {
	require.Eventually(t, m.Ready, 5*time.Second, time.Millisecond)
}

func TestStartBarrierReleasesOnlyWhenAllAreReady(t *testing.T) {
	ms := []*Machine{heldMachine(t, 0), heldMachine(t, 1)}
	state, ended, err := releaseWhenReady(ms)
	require.NoError(t, err)
	require.Equal(t, barrierWaiting, state)
	require.Nil(t, ended)

	g0 := playGuest(ms[0])
	waitReady(t, ms[0])
	state, _, err = releaseWhenReady(ms)
	require.NoError(t, err)
	require.Equal(t, barrierWaiting, state, "node 1 is not ready yet")

	g1 := playGuest(ms[1])
	waitReady(t, ms[1])
	state, _, err = releaseWhenReady(ms)
	require.NoError(t, err)
	require.Equal(t, barrierReleased, state)
	for _, g := range []<-chan startResult{g0, g1} {
		select {
		case r := <-g:
			require.Equal(t, startResult{start: true}, r)
		case <-time.After(5 * time.Second):
			t.Fatal("a released guest did not start")
		}
	}
}

func TestStartBarrierBreaksWhenANodeEnds(t *testing.T) {
	ms := []*Machine{heldMachine(t, 0), heldMachine(t, 1)}
	playGuest(ms[0])
	waitReady(t, ms[0])
	close(ms[1].done) // node 1's VM exited before it was ready
	state, ended, err := releaseWhenReady(ms)
	require.NoError(t, err)
	require.Equal(t, barrierBroken, state)
	require.Same(t, ms[1], ended)
	require.Same(t, ms[1], endedFirst(ended, ms))
}

func TestAwaitStartTakesASignalAsTheCommandsStatus(t *testing.T) {
	m := heldMachine(t, 0)
	g := playGuest(m)
	waitReady(t, m)
	_, err := m.st.host[streamCtl].WriteString("dump\nsignal 15\n")
	require.NoError(t, err)
	select {
	case r := <-g:
		require.Equal(t, startResult{start: false, status: 128 + 15}, r)
	case <-time.After(5 * time.Second):
		t.Fatal("the held guest ignored the signal")
	}
	_, err = os.Stat(m.runDir + "/" + ctlDmesg + ".done")
	require.NoError(t, err, "the dump asked for while held was answered")
}

func TestAwaitStartFailsWhenTheControlPortCloses(t *testing.T) {
	m := heldMachine(t, 0)
	g := playGuest(m)
	waitReady(t, m)
	require.NoError(t, m.st.host[streamCtl].Close())
	select {
	case r := <-g:
		require.False(t, r.start)
		require.ErrorContains(t, r.err, "closed before start")
	case <-time.After(5 * time.Second):
		t.Fatal("the held guest did not notice the closed port")
	}
}
