//go:build linux && cgo

package conn_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// extRemoteOf is what the other side gets from m's extended descriptor.
func extRemoteOf(t *testing.T, m *mr.Local) *mr.Remote {
	t.Helper()
	d := m.ExtendedDescriptor()
	r, err := mr.RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)
	return r
}

// word reads the 8-byte word at off of b in the host's byte order.
func word(b []byte, off int) uint64 { return binary.NativeEndian.Uint64(b[off:]) }

// TestIntegrationRemoteAtomics: a compare-and-swap that matches swaps and
// one that does not leaves the word alone, a fetch-and-add adds; each
// returns the word's old value into the result region, with the
// completion's opcode.
func TestIntegrationRemoteAtomics(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)

	dst, dstMem := region(t, p, 4096, mr.UsageAtomicDst|mr.UsageReadSrc)
	res, resMem := region(t, p, 4096, mr.UsageReadDst)
	rdst := extRemoteOf(t, dst)
	require.Equal(t, mr.UsageAtomicDst|mr.UsageReadSrc, rdst.Usage())
	binary.NativeEndian.PutUint64(dstMem[64:], 41)

	require.NoError(t, client.CompareAndSwap(rdst, 64, res, 8, 41, 500, rpma.CompletionAlways, 1))
	okWC(t, ctx, client.CQ(), rpma.WCCompSwap, 1)
	require.Equal(t, uint64(41), word(resMem, 8), "the old value")
	require.Equal(t, uint64(500), word(dstMem, 64), "swapped")

	require.NoError(t, client.CompareAndSwap(rdst, 64, res, 16, 41, 7, rpma.CompletionAlways, 2))
	okWC(t, ctx, client.CQ(), rpma.WCCompSwap, 2)
	require.Equal(t, uint64(500), word(resMem, 16), "the old value of a failed compare")
	require.Equal(t, uint64(500), word(dstMem, 64), "not swapped")

	require.NoError(t, client.FetchAndAdd(rdst, 64, res, 24, 1<<40, rpma.CompletionAlways, 3))
	okWC(t, ctx, client.CQ(), rpma.WCFetchAdd, 3)
	require.Equal(t, uint64(500), word(resMem, 24))
	require.Equal(t, uint64(500+1<<40), word(dstMem, 64))

	// Wrapping around at 2^64, and the neighbours untouched.
	require.NoError(t, client.FetchAndAdd(rdst, 64, res, 32, ^uint64(0), rpma.CompletionAlways, 4))
	okWC(t, ctx, client.CQ(), rpma.WCFetchAdd, 4)
	require.Equal(t, uint64(500+1<<40-1), word(dstMem, 64))
	require.Equal(t, uint64(0), word(dstMem, 56))
	require.Equal(t, uint64(0), word(dstMem, 72))
}

// TestIntegrationFetchAndAddCounter: goroutines on several connections
// add 1 to one remote counter; the counter ends at the exact sum and the
// old values returned are each number below it exactly once, which a
// read-modify-write that is not atomic would not give.
func TestIntegrationFetchAndAddCounter(t *testing.T) {
	const conns, perConn = 4, 150
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	dst, dstMem := region(t, p, 4096, mr.UsageAtomicDst)
	rdst := extRemoteOf(t, dst)

	var mu sync.Mutex
	var olds []uint64
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
		res, resMem := region(t, p, 64, mr.UsageReadDst)
		wg.Go(func() {
			mine := make([]uint64, 0, perConn)
			for j := 0; j < perConn; j++ {
				if err := client.FetchAndAdd(rdst, 8, res, 0, 1, rpma.CompletionAlways, uint64(j)); err != nil {
					errs <- err
					return
				}
				wc, err := tryNextWC(ctx, client.CQ())
				if err == nil {
					err = wc.Err()
				}
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, word(resMem, 0))
			}
			mu.Lock()
			olds = append(olds, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, uint64(conns*perConn), word(dstMem, 8), "the counter")
	sort.Slice(olds, func(i, j int) bool { return olds[i] < olds[j] })
	for i, v := range olds {
		require.Equal(t, uint64(i), v, "each old value exactly once")
	}
}

// TestIntegrationCompareAndSwapLock: two clients take a lock word with
// compare-and-swap, increment a counter with a plain RDMA read and write
// inside, and release the lock with compare-and-swap: the counter ends at
// the number of critical sections, and the lock word always held its
// owner when released.
func TestIntegrationCompareAndSwapLock(t *testing.T) {
	const clients, rounds = 2, 40
	const lockOff, counterOff = 0, 64
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	ctx := testCtx(t)
	shared, sharedMem := region(t, p, 4096, mr.UsageAtomicDst|mr.UsageReadSrc|mr.UsageWriteDst)
	rshared := extRemoteOf(t, shared)

	var wg sync.WaitGroup
	errs := make(chan error, clients)
	spins := make([]int, clients)
	for i := 0; i < clients; i++ {
		client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
		local, localMem := region(t, p, 4096, mr.UsageReadDst|mr.UsageWriteSrc)
		id := uint64(i + 1)
		wg.Go(func() {
			if err := lockedIncrements(ctx, client, rshared, local, localMem, id, rounds, &spins[id-1]); err != nil {
				errs <- fmt.Errorf("client %d: %w", id, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("spins while the lock was taken: %v", spins)
	require.Equal(t, uint64(clients*rounds), word(sharedMem, counterOff))
	require.Equal(t, uint64(0), word(sharedMem, lockOff), "released")
}

// lockedIncrements does rounds critical sections of client id: take the
// lock at offset 0 of shared (CAS 0 -> id until the old value is 0), read
// the counter at 64 into local, write it back plus one, release (CAS
// id -> 0, whose old value must be id).
func lockedIncrements(ctx context.Context, c *conn.Conn, shared *mr.Remote, local *mr.Local, localMem []byte, id uint64, rounds int, spins *int) error {
	step := func(post func() error) error {
		if err := post(); err != nil {
			return err
		}
		wc, err := tryNextWC(ctx, c.CQ())
		if err != nil {
			return err
		}
		return wc.Err()
	}
	for r := 0; r < rounds; r++ {
		for {
			if err := step(func() error { return c.CompareAndSwap(shared, 0, local, 0, 0, id, rpma.CompletionAlways, 1) }); err != nil {
				return err
			}
			if word(localMem, 0) == 0 {
				break
			}
			*spins++
		}
		if err := step(func() error { return c.Read(local, 64, shared, 64, 8, rpma.CompletionAlways, 2) }); err != nil {
			return err
		}
		binary.NativeEndian.PutUint64(localMem[128:], word(localMem, 64)+1)
		if err := step(func() error { return c.Write(shared, 64, local, 128, 8, rpma.CompletionAlways, 3) }); err != nil {
			return err
		}
		if err := step(func() error { return c.CompareAndSwap(shared, 0, local, 8, id, 0, rpma.CompletionAlways, 4) }); err != nil {
			return err
		}
		if got := word(localMem, 8); got != id {
			return fmt.Errorf("round %d: the lock held %d when its owner released it", r, got)
		}
	}
	return nil
}

// TestIntegrationRemoteAtomicsRefused: what a remote atomic refuses
// before posting (a descriptor without mr.UsageAtomicDst, as librpma's
// and a C librpma peer's are; a misaligned word; a result region without
// mr.UsageReadDst), and what the device refuses: a descriptor that claims
// mr.UsageAtomicDst for a region registered without it fails with a
// remote access error, and breaks the connection.
func TestIntegrationRemoteAtomicsRefused(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)
	dst, dstMem := region(t, p, 4096, mr.UsageAtomicDst|mr.UsageWriteDst)
	plain, plainMem := region(t, p, 4096, mr.UsageWriteDst)
	res, _ := region(t, p, 4096, mr.UsageReadDst)
	noDst, _ := region(t, p, 4096, mr.UsageWriteSrc)

	for _, c := range []struct {
		name string
		err  error
	}{
		{"librpma's descriptor lacks the usage", client.CompareAndSwap(remoteOf(t, dst), 0, res, 0, 0, 1, rpma.CompletionAlways, 1)},
		{"misaligned word", client.FetchAndAdd(extRemoteOf(t, dst), 4, res, 0, 1, rpma.CompletionAlways, 1)},
		{"word past the end", client.FetchAndAdd(extRemoteOf(t, dst), 4096, res, 0, 1, rpma.CompletionAlways, 1)},
		{"result without mr.UsageReadDst", client.FetchAndAdd(extRemoteOf(t, dst), 0, noDst, 0, 1, rpma.CompletionAlways, 1)},
		{"result past the end", client.FetchAndAdd(extRemoteOf(t, dst), 0, res, 4092, 1, rpma.CompletionAlways, 1)},
		{"no result", client.FetchAndAdd(extRemoteOf(t, dst), 0, nil, 0, 1, rpma.CompletionAlways, 1)},
		{"bad flags", client.FetchAndAdd(extRemoteOf(t, dst), 0, res, 0, 1, 0, 1)},
	} {
		require.ErrorIs(t, c.err, rpma.ErrInvalidArgument, c.name)
		t.Logf("%s: %v", c.name, c.err)
	}
	// Nothing was posted: the first completion is the next operation's,
	// and the target word is untouched.
	require.NoError(t, client.FetchAndAdd(extRemoteOf(t, dst), 0, res, 0, 3, rpma.CompletionAlways, 9))
	okWC(t, ctx, client.CQ(), rpma.WCFetchAdd, 9)
	require.Equal(t, uint64(3), word(dstMem, 0))

	// A forged extended descriptor: the device refuses the access.
	d := plain.ExtendedDescriptor()
	d[mr.DescriptorSize] |= byte(mr.UsageAtomicDst >> 8)
	forged, err := mr.RemoteFromExtendedDescriptor(d[:])
	require.NoError(t, err)
	require.NoError(t, client.FetchAndAdd(forged, 0, res, 0, 1, rpma.CompletionAlways, 10))
	wc, err := tryNextWC(ctx, client.CQ())
	require.NoError(t, err)
	require.Equal(t, uint64(10), wc.OpContext)
	require.Equal(t, rpma.WCRemAccessErr, wc.Status, "%v", wc.Err())
	require.Equal(t, uint64(0), word(plainMem, 0))
	err = client.FetchAndAdd(extRemoteOf(t, dst), 0, res, 0, 1, rpma.CompletionAlways, 11)
	require.ErrorIs(t, err, rpma.ErrConnBroken)
}
