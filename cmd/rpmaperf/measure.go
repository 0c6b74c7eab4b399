package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// measurement is one (operation, size) run over every connection.
type measurement struct {
	cfg   *config
	conns []*clientConn
	op    op
	size  int
	seed  int // the run's data pattern (writeByte)

	start    time.Time
	deadline time.Time // with -duration
}

// worker is one goroutine's share of a run: the lanes it drives (in event
// mode a goroutine of its own each).
type worker struct {
	cc     *clientConn
	states []*opState
	// last is when the worker last saw a completion (ns since the start),
	// for the watchdog; done once it has finished.
	last atomic.Int64
	done atomic.Bool
}

// run measures: it starts the workers (one per connection in busy mode,
// -goroutines per connection in event mode), waits for them, checks the
// data with -check and sums up.
func (m *measurement) run(parent context.Context) (result, error) {
	for _, cc := range m.conns {
		m.prepare(cc)
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	workers := m.workers()
	m.start = time.Now()
	if m.cfg.duration > 0 {
		m.deadline = m.start.Add(m.cfg.duration)
	}
	stop := make(chan struct{})
	go m.watchdog(workers, cancel, stop)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			defer w.done.Store(true)
			var err error
			if m.cfg.mode == modeBusy {
				err = m.busy(ctx, w)
			} else {
				err = m.event(ctx, w)
			}
			if err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(m.start)
	close(stop)
	if err := context.Cause(ctx); err != nil {
		return result{}, err
	}
	if m.cfg.check {
		for _, w := range workers {
			if err := m.verify(parent, w); err != nil {
				return result{}, fmt.Errorf("-check: %w", err)
			}
		}
	}
	var lat []int64
	for _, w := range workers {
		for _, st := range w.states {
			lat = append(lat, st.lat...)
		}
	}
	return m.result(lat, elapsed), nil
}

// workers splits the run: each goroutine does -iters operations over its
// -depth lanes (lane numbers are per connection).
func (m *measurement) workers() []*worker {
	var ws []*worker
	for _, cc := range m.conns {
		for g := range m.cfg.goroutines {
			w := &worker{cc: cc}
			for d := range m.cfg.depth {
				st := &opState{lane: g*m.cfg.depth + d, seq: uint64(m.seed) << 32}
				if m.cfg.duration == 0 {
					st.quota = m.cfg.iters / m.cfg.depth
					if d < m.cfg.iters%m.cfg.depth {
						st.quota++
					}
					if st.quota == 0 {
						continue
					}
				}
				st.lat = make([]int64, 0, max(st.quota, 1024))
				w.states = append(w.states, st)
			}
			ws = append(ws, w)
		}
	}
	return ws
}

// more reports whether lane st has another operation to do.
func (m *measurement) more(st *opState) bool {
	if m.cfg.duration > 0 {
		return time.Now().Before(m.deadline)
	}
	return st.ops < st.quota
}

// progress records a completion at now for the watchdog.
func (m *measurement) progress(w *worker, now time.Time) {
	w.last.Store(int64(now.Sub(m.start)))
}

// watchdog ends the run when a worker has seen no completion for
// -timeout: every wait is bounded, also a busy poll's.
func (m *measurement) watchdog(ws []*worker, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	t := time.NewTicker(max(m.cfg.timeout/8, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			since := int64(now.Sub(m.start))
			for _, w := range ws {
				if !w.done.Load() && time.Duration(since-w.last.Load()) > m.cfg.timeout {
					cancel(fmt.Errorf("no completion for %v (-timeout): is the server gone?", m.cfg.timeout))
					return
				}
			}
		}
	}
}
