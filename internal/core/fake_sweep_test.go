//go:build rpma_fake && linux

package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/rpma"
)

// A sweep on the fake: completions held back until released are found by
// the sweep after the release and not before, each CQ's GetWC returns its
// own connection's completion, a CQ busy with another goroutine is
// skipped, a closed connection's CQ is never ready, and an injected poll
// failure is reported.
func TestFakeSweep(t *testing.T) {
	p := fakePeer(t)
	p.SetTuning(Tuning{NoReap: true})
	const conns = 4
	clients := make([]*Conn, conns)
	qs := make([]*CQ, conns)
	for i := range clients {
		clients[i], _ = fakePair(t, p, nil)
		qs[i] = clients[i].CQ()
	}
	s, err := NewSweep(qs)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	ready := make([]int, conns)

	ibv.SetFakeTiming(ibv.FakeLater)
	defer ibv.SetFakeTiming(ibv.FakeNow)
	for i, c := range clients {
		require.NoError(t, c.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(100+i)))
	}
	n, err := s.Poll(ready)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is ready before the completions come")
	ibv.FakeRelease()
	n, err = s.Poll(ready)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 3}, ready[:n])
	var wc [2]WC
	for i, q := range qs {
		got, err := q.GetWC(wc[:])
		require.NoError(t, err)
		require.Equal(t, 1, got)
		require.Equal(t, uint64(100+i), wc[0].OpContext, "CQ %d's own completion", i)
	}
	n, err = s.Poll(ready)
	require.NoError(t, err)
	require.Zero(t, n, "GetWC took everything")

	ibv.SetFakeTiming(ibv.FakeNow)
	require.NoError(t, clients[1].Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 7))
	require.NoError(t, clients[3].Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 9))
	qs[1].dl.mu.Lock()
	n, err = s.Poll(ready)
	qs[1].dl.mu.Unlock()
	require.NoError(t, err)
	require.Equal(t, []int{3}, ready[:n], "CQ 1 is busy: skipped")
	require.NoError(t, clients[2].Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 8))
	require.NoError(t, clients[2].Close())
	n, err = s.Poll(ready)
	require.NoError(t, err)
	require.Equal(t, []int{1, 3}, ready[:n], "CQ 1 once free; never the closed CQ 2")
	n, err = s.Poll(ready[:1])
	require.NoError(t, err)
	require.Equal(t, 1, n, "no more than ready holds")

	site := injectSite(t, "POLL_CQ")
	require.NoError(t, clients[0].Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 10))
	ibv.InjectReset()
	ibv.InjectArm(site, 1, 5) // EIO
	defer ibv.InjectReset()
	_, err = s.Poll(ready)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.True(t, ibv.InjectFired())
}
