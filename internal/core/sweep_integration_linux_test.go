//go:build linux && cgo

package core

import (
	"os"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// crossings returns the process's cgo calls so far.
func crossings() uint64 {
	s := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestIntegrationSweep: a sweep polls 16 CQs in one crossing per Poll:
// with a write posted on each of 16 connections (reaping off, so that the
// completions stay in the provider's CQs), the sweeps until every CQ was
// ready made one crossing each, and GetWC then returned each connection's
// own completion with no crossing at all. A CQ whose lock is held
// elsewhere is skipped, and a closed connection's CQ is never ready.
func TestIntegrationSweep(t *testing.T) {
	p, ip := testPeer(t)
	p.SetTuning(Tuning{NoReap: true})
	const conns = 16
	clients := make([]*Conn, conns)
	qs := make([]*CQ, conns)
	for i := range clients {
		clients[i], _ = testPair(t, p, ip, nil)
		qs[i] = clients[i].CQ()
	}
	s, err := NewSweep(qs)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()

	for i, c := range clients {
		require.NoError(t, c.Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, uint64(100+i)))
	}
	ready := make([]int, conns)
	seen := make([]bool, conns)
	sweeps, left := 0, conns
	before := crossings()
	for deadline := time.Now().Add(10 * time.Second); left > 0; sweeps++ {
		require.True(t, time.Now().Before(deadline), "%d of %d CQs never ready", left, conns)
		n, err := s.Poll(ready)
		require.NoError(t, err)
		for _, i := range ready[:n] {
			if !seen[i] {
				seen[i] = true
				left--
			}
		}
	}
	require.Equal(t, uint64(sweeps), crossings()-before, "one crossing per sweep of %d CQs", conns)
	t.Logf("%d sweeps until all %d CQs were ready", sweeps, conns)

	before = crossings()
	var wc [2]WC
	for i, q := range qs {
		n, err := q.GetWC(wc[:])
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, wc[0].Err())
		require.Equal(t, uint64(100+i), wc[0].OpContext, "CQ %d's own completion", i)
	}
	require.Zero(t, crossings()-before, "GetWC of swept completions crosses nothing")

	// A busy CQ is skipped, not waited for; a closed one is never ready.
	require.NoError(t, clients[1].Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 7))
	qs[1].dl.mu.Lock()
	n, err := s.Poll(ready)
	require.NoError(t, err)
	require.NotContains(t, ready[:n], 1, "a CQ whose lock another goroutine holds")
	qs[1].dl.mu.Unlock()
	require.NoError(t, clients[2].Write(nil, 0, nil, 0, 0, rpma.CompletionAlways, 8))
	require.NoError(t, clients[2].Close())
	for deadline := time.Now().Add(5 * time.Second); ; {
		n, err = s.Poll(ready)
		require.NoError(t, err)
		require.NotContains(t, ready[:n], 2, "a closed connection's CQ")
		if slicesContains(ready[:n], 1) {
			break
		}
		require.True(t, time.Now().Before(deadline), "CQ 1 never ready once free")
	}
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// NewSweep refuses what it cannot sweep before allocating anything.
func TestIntegrationSweepRefuses(t *testing.T) {
	p, ip := testPeer(t)
	client, _ := testPair(t, p, ip, nil)
	_, err := NewSweep(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = NewSweep([]*CQ{client.CQ(), nil})
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = NewSweep([]*CQ{client.CQ(), client.CQ()})
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	var s *Sweep
	_, err = s.Poll(nil)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	s, err = NewSweep([]*CQ{client.CQ()})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	_, err = s.Poll(nil)
	require.ErrorIs(t, err, os.ErrClosed)
}
