package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// RegionConfig configures a [Region]. A zero field means its default, so
// a nil config, or a literal with only the fields a program cares about,
// works.
type RegionConfig struct {
	// Flush is what a write waits for: rpma.FlushPersistent (the zero
	// value: the bytes are durable when WriteAt returns) or
	// rpma.FlushVisibility (visible to the other side's CPUs).
	Flush rpma.FlushType
	// SlotSize is the size of one staging slot (default 64 KiB): a call
	// moves at most this many bytes per operation, so a longer one is
	// several operations, each complete before the next.
	SlotSize int
	// Slots is how many calls may have an operation in flight at once
	// (default 16); further calls wait for a free slot, with their ctx.
	Slots int
}

// Region defaults.
const (
	DefaultRegionSlotSize = 64 << 10
	DefaultRegionSlots    = 16
)

// Region is a remote memory region, reached through one connection, seen
// as Go's [io.WriterAt] and [io.ReaderAt]: callers pass ordinary byte
// slices (on the Go heap, reused as they like after the call), and the
// Region moves them through registered staging memory of its own, since
// the device reads and writes only registered memory. WriteAt returns
// when its bytes are durable on the other side (or visible, as
// RegionConfig.Flush says); ReadAt when they are in p. Any number of
// goroutines may call a Region at once; each call returns on its own
// operations' completions (conn.Conn.WriteAndFlushWait, ReadWait).
//
// WriteAt and ReadAt wait without a deadline: they end when their
// operations complete, or the connection breaks or closes (set
// conn.Config.PeerTimeout to bound a silent peer). WriteAtContext and
// ReadAtContext take a ctx. A call whose ctx ends while its operation is
// in flight returns an error matching ctx's and [rpma.ErrOutcomeUnknown]
// and leaves its staging slot out of use until Close, because the device
// may still read or write it: a program that lets many operations time
// out that way runs out of slots (its calls then wait for one, with
// their ctx).
type Region struct {
	c     *conn.Conn
	dst   *mr.Remote
	flush rpma.FlushType
	slot  int
	mem   *pmem.Region
	local *mr.Local
	buf   []byte
	free  chan int // the staging slots no call holds

	mu      sync.Mutex
	closed  bool
	calls   sync.WaitGroup // the calls holding or waiting for a slot
	closing chan struct{}  // closed by Close: slot waits end
}

var (
	_ io.WriterAt = (*Region)(nil)
	_ io.ReaderAt = (*Region)(nil)
)

// NewRegion returns dst, reached through c, as a Region. Its staging
// memory (Slots × SlotSize bytes, DRAM) is registered with p, which must
// be c's peer. Errors: a nil p, c or dst, or a config out of range, match
// rpma.ErrInvalidArgument; a write that waits for a persistent flush
// needs what conn.Conn.WriteAndFlushWait needs (the other side's direct
// write to persistent memory, dst's mr.UsageFlushPersistent), and a
// Region that could never write that way is refused here with an error
// matching rpma.ErrNotSupported, before anything is allocated.
func NewRegion(p *peer.Peer, c *conn.Conn, dst *mr.Remote, cfg *RegionConfig) (*Region, error) {
	var rc RegionConfig
	if cfg != nil {
		rc = *cfg
	}
	if rc.SlotSize == 0 {
		rc.SlotSize = DefaultRegionSlotSize
	}
	if rc.Slots == 0 {
		rc.Slots = DefaultRegionSlots
	}
	switch {
	case p == nil || c == nil || dst == nil:
		return nil, fmt.Errorf("session: new region: a nil peer, connection or remote region: %w", rpma.ErrInvalidArgument)
	case rc.SlotSize < 0 || rc.Slots < 0 || rc.SlotSize > 1<<30 || rc.Slots > 1<<16:
		return nil, fmt.Errorf("session: new region: SlotSize %d and Slots %d must be within [1, 1 GiB] and [1, 65536]: %w",
			rc.SlotSize, rc.Slots, rpma.ErrInvalidArgument)
	case rc.Flush != rpma.FlushPersistent && rc.Flush != rpma.FlushVisibility:
		return nil, fmt.Errorf("session: new region: flush type %v: %w", rc.Flush, rpma.ErrInvalidArgument)
	case rc.Flush == rpma.FlushPersistent && dst.FlushUsage()&mr.UsageFlushPersistent == 0:
		return nil, fmt.Errorf("session: new region: the remote region does not allow a persistent flush (use rpma.FlushVisibility for memory that is not persistent): %w", rpma.ErrNotSupported)
	}
	mem, err := pmem.Alloc(rc.SlotSize * rc.Slots)
	if err != nil {
		return nil, fmt.Errorf("session: new region: staging memory: %w", err)
	}
	local, err := mr.Reg(p, mem.Bytes(), mr.UsageWriteSrc|mr.UsageReadDst)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("session: new region: registering the staging memory: %w", err), mem.Close())
	}
	r := &Region{c: c, dst: dst, flush: rc.Flush, slot: rc.SlotSize, mem: mem, local: local, buf: mem.Bytes(),
		free: make(chan int, rc.Slots), closing: make(chan struct{})}
	for i := range rc.Slots {
		r.free <- i
	}
	return r, nil
}

// Size returns the remote region's size in bytes.
func (r *Region) Size() int64 { return int64(r.dst.Size()) }

// WriteAt writes p at off of the remote region and returns when every
// byte is durable there (or visible: RegionConfig.Flush). It is
// WriteAtContext without a deadline.
func (r *Region) WriteAt(p []byte, off int64) (int, error) {
	return r.WriteAtContext(context.Background(), p, off)
}

// ReadAt reads len(p) bytes at off of the remote region into p. It is
// ReadAtContext without a deadline.
func (r *Region) ReadAt(p []byte, off int64) (int, error) {
	return r.ReadAtContext(context.Background(), p, off)
}

// WriteAtContext is WriteAt with ctx. p is written in pieces of at most
// SlotSize bytes, each durable before the next is posted; n counts the
// bytes durable when it returns. A range beyond the remote region is
// refused before anything is posted (an error matching
// rpma.ErrInvalidArgument, n 0), as is a closed Region (os.ErrClosed).
func (r *Region) WriteAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	return r.do(ctx, "write at", p, off, true)
}

// ReadAtContext is ReadAt with ctx: it reads p in pieces of at most
// SlotSize bytes; n counts the bytes in p when it returns. As io.ReaderAt
// asks, a range that ends beyond the remote region reads what is there
// and returns io.EOF; an offset beyond it returns io.EOF at once.
func (r *Region) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	size := r.Size()
	if off >= 0 && off < size && off+int64(len(p)) > size {
		n, err := r.ReadAtContext(ctx, p[:size-off], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	if off >= 0 && off >= size && len(p) > 0 {
		return 0, io.EOF
	}
	return r.do(ctx, "read at", p, off, false)
}

// do writes p (write) or reads into it through the staging slots, piece
// by piece.
func (r *Region) do(ctx context.Context, what string, p []byte, off int64, write bool) (int, error) {
	if ctx == nil {
		return 0, fmt.Errorf("session: %s: a nil context: %w", what, rpma.ErrInvalidArgument)
	}
	if off < 0 || off > r.Size() || int64(len(p)) > r.Size()-off {
		return 0, fmt.Errorf("session: %s: [%d, %d+%d) is beyond the remote region's %d bytes: %w",
			what, off, off, len(p), r.Size(), rpma.ErrInvalidArgument)
	}
	done := 0
	for done < len(p) {
		slot, err := r.take(ctx, what)
		if err != nil {
			return done, err
		}
		n := min(len(p)-done, r.slot)
		slotOff, dstOff := slot*r.slot, int(off)+done
		staging := r.buf[slotOff : slotOff+n]
		if write {
			copy(staging, p[done:done+n])
			err = r.c.WriteAndFlushWait(ctx, r.dst, dstOff, r.local, slotOff, n, r.flush)
		} else {
			err = r.c.ReadWait(ctx, r.local, slotOff, r.dst, dstOff, n)
		}
		if err != nil {
			// Posted, and its ctx ended first: the operation may still
			// be in flight, and the device may yet read or write the
			// slot.
			r.give(slot, errors.Is(err, rpma.ErrOutcomeUnknown))
			return done, fmt.Errorf("session: %s: %w", what, err)
		}
		if !write {
			copy(p[done:done+n], staging)
		}
		r.give(slot, false)
		done += n
	}
	return done, nil
}

// take takes a free staging slot, waiting with ctx.
func (r *Region) take(ctx context.Context, what string) (int, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, fmt.Errorf("session: %s: the region is closed: %w", what, os.ErrClosed)
	}
	r.calls.Add(1)
	r.mu.Unlock()
	select {
	case slot := <-r.free:
		return slot, nil
	case <-ctx.Done():
		r.calls.Done()
		return 0, fmt.Errorf("session: %s: waiting for a staging slot: %w", what, ctx.Err())
	case <-r.closing:
		r.calls.Done()
		return 0, fmt.Errorf("session: %s: the region is closed: %w", what, os.ErrClosed)
	}
}

// give gives slot back, or keeps it out of use until Close when retire.
func (r *Region) give(slot int, retire bool) {
	if !retire {
		r.free <- slot // never blocks: the channel holds every slot
	}
	r.calls.Done()
}

// Close waits for the calls in flight (close or break the connection
// first to end those that wait for a silent peer), refuses later calls
// with os.ErrClosed, and deregisters and frees the staging memory. It is
// idempotent; it does not close the connection.
func (r *Region) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.closing)
	r.mu.Unlock()
	r.calls.Wait()
	return errors.Join(r.local.Dereg(), r.mem.Close())
}
