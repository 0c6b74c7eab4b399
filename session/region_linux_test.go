//go:build linux && cgo

package session_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

// TestIntegrationRegion: a remote region as io.WriterAt and io.ReaderAt.
// 16 goroutines write Go heap slices of 100 KiB (each two staging slots)
// at their own offsets through 4 slots; every byte is in the target when
// WriteAt returns, and ReadAt returns it. Go's io helpers compose with it;
// ranges beyond the region are refused before anything is posted, a
// region that cannot persist is refused at NewRegion, and Close ends the
// Region (os.ErrClosed) without closing the connection.
func TestIntegrationRegion(t *testing.T) {
	p, ip := fixture.Peer(t)
	ctx := fixture.Ctx(t)
	const (
		G     = 16
		piece = 100 << 10
		size  = G * piece
	)
	target, targetMem := fixture.Region(t, p, size, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	client, _, dst := pair(t, p, ip, target, peer.Cfg{DirectWriteToPMem: true}, nil)
	r, err := session.NewRegion(p, client, dst, &session.RegionConfig{Slots: 4})
	require.NoError(t, err)
	require.EqualValues(t, size, r.Size())

	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rand.Uint32() | 1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*G) // at most two per goroutine
	for g := range G {
		wg.Go(func() {
			off := g * piece
			mine := bytes.Clone(data[off : off+piece]) // on the Go heap, the caller's own
			n, err := r.WriteAt(mine, int64(off))
			switch {
			case err != nil:
				errs <- fmt.Errorf("goroutine %d: WriteAt: %w", g, err)
			case n != piece:
				errs <- fmt.Errorf("goroutine %d: WriteAt wrote %d", g, n)
			case !bytes.Equal(targetMem[off:off+piece], mine):
				errs <- fmt.Errorf("goroutine %d: WriteAt returned before its bytes were in the target", g)
			}
			clear(mine)
			if n, err := r.ReadAt(mine, int64(off)); err != nil || n != piece || !bytes.Equal(mine, data[off:off+piece]) {
				errs <- fmt.Errorf("goroutine %d: ReadAt: %d, %v, or other bytes", g, n, err)
			}
		})
	}
	bounded(t, "the goroutines", wg.Wait)
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Go's io helpers: a section as an io.Reader, an offset writer.
	all, err := io.ReadAll(io.NewSectionReader(r, 0, size))
	require.NoError(t, err)
	require.Equal(t, data, all)
	w := io.NewOffsetWriter(r, 10)
	_, err = io.Copy(w, bytes.NewReader([]byte("through io.Copy")))
	require.NoError(t, err)
	require.Equal(t, "through io.Copy", string(targetMem[10:25]))
	// io.ReaderAt's end of the region: a short read with io.EOF.
	tail := make([]byte, 100)
	n, err := r.ReadAt(tail, size-40)
	require.Equal(t, 40, n)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, data[size-40:], tail[:40])

	// Refused before posting: nothing reaches the target.
	before := bytes.Clone(targetMem[size-8:])
	n, err = r.WriteAt(make([]byte, 16), size-8)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Zero(t, n)
	_, err = r.WriteAt([]byte{1}, -1)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.WriteAtContext(ended, make([]byte, 8), size-8)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, rpma.ErrOutcomeUnknown)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, before, targetMem[size-8:], "a refused write reached the target")

	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "idempotent")
	_, err = r.WriteAt([]byte{1}, 0)
	require.ErrorIs(t, err, os.ErrClosed)
	require.NoError(t, client.Broken(), "the connection outlives the Region")

	// A region that could never be written durably is refused at once.
	plain, _ := fixture.Region(t, p, 4096, mr.UsageWriteDst|mr.UsageFlushVisibility)
	c2, _, dst2 := pair(t, p, ip, plain, peer.Cfg{}, nil)
	_, err = session.NewRegion(p, c2, dst2, nil)
	require.ErrorIs(t, err, rpma.ErrNotSupported)
	r2, err := session.NewRegion(p, c2, dst2, &session.RegionConfig{Flush: rpma.FlushVisibility})
	require.NoError(t, err)
	_, err = r2.WriteAt([]byte("visible"), 0)
	require.NoError(t, err)
	require.NoError(t, r2.Close())
	_, err = session.NewRegion(nil, c2, dst2, nil)
	require.True(t, errors.Is(err, rpma.ErrInvalidArgument))
}

// bounded fails the test when f has not returned within the fixture's
// bound: a hang is a failure.
func bounded(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not return within 2 minutes", what)
	}
}
