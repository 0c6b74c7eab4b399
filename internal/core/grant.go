package core

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Grants: access to a range of a local region given to one connection
// only, and taken back, with memory windows of type 2B (librpma has no
// such thing: every connection of a Peer reaches every region registered
// for remote access).
//
// The region is registered with UsageGranted: IBV_ACCESS_MW_BIND and no
// remote access, so its own key opens nothing. A grant allocates a type 2
// window and binds it with a work request on the connection's QP; the
// device accepts the window's key only for requests that arrive on that
// QP. Revoking deallocates the window (ibv_dealloc_mw), which invalidates
// it at once: no work request, no wait.
//
// A grant narrower than the region binds its window to a registration of
// exactly the granted range, made for it: rxe checks a request that uses a
// window against the range of the window's registration, not of the
// window (check_rkey calls mr_check_range on mw->mr), so a window bound to
// the whole region would open all of it. A grant of the whole region binds
// to the region's own registration.
//
// The bind takes a send-queue slot and a CQ entry like any request; its
// completion is the library's own (wrSlot.own): GetWC never returns it,
// though a completion wait may wake for it and then find nothing.

// Grant is a connection's access to [Addr, Addr+Size) of a local region.
type Grant struct {
	conn   *Conn
	mr     *MR
	shadow *ibv.MR // the registration of exactly the granted range, nil for the whole region
	mw     *ibv.MW
	addr   uint64
	size   uint64
	rkey   uint32
	usage  int
	live   bool // under conn.grants.mu
	leak   *leak.Handle
}

// grantSet is a connection's grants. Its mutex also serializes binds, so
// that one of the library's own requests is outstanding at a time.
type grantSet struct {
	mu   sync.Mutex
	live map[*Grant]struct{}
	// Counters (rpma.ConnStats): grants bound, and revoked.
	bound, revoked uint64
}

// Grant is conn.Conn.Grant's core; see there.
func (c *Conn) Grant(ctx context.Context, m *MR, off, n int, usage int) (*Grant, error) {
	const op = "conn_grant"
	if ctx == nil {
		return nil, errNil(op, "context")
	}
	if c == nil {
		return nil, errNil(op, "connection")
	}
	if m == nil {
		return nil, errNil(op, "memory region")
	}
	if !c.enter() {
		return nil, errClosed(op, "connection")
	}
	defer c.exit()
	if !m.enter() {
		return nil, errClosed(op, "memory region")
	}
	defer m.exit()
	if err := c.checkGrant(op, m, off, n, usage); err != nil {
		return nil, err
	}
	// An ended ctx is refused before anything is allocated or posted: a
	// bind posted now could complete at once (rxe binds inside the
	// post) and hand back a live grant the caller gave up on.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rpma: %s: not granted, nothing posted: %w", op, err)
	}
	g := &Grant{conn: c, mr: m, addr: m.addr + uint64(off), size: uint64(n), usage: usage}
	access := RegionAccess(usage, c.peer.nativeFlush, c.peer.attr.CapFlagsEx, c.peer.iwarp) & accessRemote

	c.grants.mu.Lock()
	defer c.grants.mu.Unlock()
	var err error
	if g.mw, err = c.peer.pd.AllocMW2(); err != nil {
		return nil, provider(op, err)
	}
	target := m.mr
	if g.size != m.size {
		// A registration of exactly the range (see above); local write
		// when the window lets the other side write (C10-74).
		local := ibv.AccessMWBind
		if access&(ibv.AccessRemoteWrite|ibv.AccessRemoteAtomic) != 0 {
			local |= ibv.AccessLocalWrite
		}
		ptr := unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.buf)), off)
		if g.shadow, err = c.peer.pd.RegMR(ptr, n, local); err != nil {
			g.release()
			return nil, regError(op, err, n, fmt.Sprintf("registering the granted range [%d, %d+%d) for its window", off, off, n))
		}
		target = g.shadow
	}
	g.rkey = ibv.IncRKey(g.mw.RKey)
	if err := c.bind(ctx, op, g, target, access); err != nil {
		if !g.live { // else abandoned, still queued
			g.release()
		}
		return nil, err
	}
	c.grants.add(g)
	return g, nil
}

// checkGrant checks a grant's arguments before anything is allocated or
// posted.
func (c *Conn) checkGrant(op string, m *MR, off, n int, usage int) error {
	if c.peer.attr.DeviceCapFlags&ibv.DeviceMemWindowType2B == 0 {
		return rpmaerr.NoSupp(op, "the device has no memory windows of type 2B (device_cap_flags 0x%x)", c.peer.attr.DeviceCapFlags)
	}
	if m.peer != c.peer {
		return rpmaerr.Inval(op, "the memory region is registered on another peer (protection domain) than the connection's")
	}
	if m.usage&UsageGranted == 0 {
		return rpmaerr.Inval(op, "the memory region was not registered with mr.UsageGranted: its own registration decides who reaches it")
	}
	if m.odp {
		return rpmaerr.NoSupp(op, "the memory region needed On-Demand Paging: grants of such regions are not supported")
	}
	if usage == 0 || usage&^usageGrantable != 0 {
		return rpmaerr.Inval(op, "usage 0x%x: must be non-zero and only mr.UsageReadSrc, mr.UsageWriteDst, the flush usages and mr.UsageAtomicDst", usage)
	}
	if usage&^m.usage != 0 {
		return rpmaerr.Inval(op, "usage 0x%x is not in the region's usage 0x%x", usage&^m.usage, m.usage&usageRemote)
	}
	if n == 0 {
		return rpmaerr.Inval(op, "empty range")
	}
	return checkRange(op, "memory region", off, n, m.size)
}

// bindPollMax bounds the wait between two polls of a bind's completion.
const bindPollMax = time.Millisecond

// bind posts the bind of g's window to [g.addr, g.addr+g.size) of target,
// as the library's own signaled request, and waits for its completion
// (c.grants.mu held).
func (c *Conn) bind(ctx context.Context, op string, g *Grant, target *ibv.MR, access int) error {
	d, err := c.lockData(op)
	if err != nil {
		return err
	}
	// The post protocol (post.go), signaled; a bind refused for room is
	// not counted in QueueFull (it is no caller's post), and the bind is
	// the library's, not a data-path operation: no stats, no yield.
	sq, cq, qp := c.q.sq, c.q.cq, c.q.qp
	p, err := sq.open(1)
	if err != nil {
		d.mu.Unlock()
		return err
	}
	sl, f := p.slot(0, true)
	*sl = wrSlot{own: true}
	errno, reaped := qp.PostBindMW(p.wrID(0), f, g.mw, g.rkey, target, g.addr, g.size, access, cq.reap())
	if errno != 0 {
		p.rollback(0, 1, p.saved)
	}
	cq.reaped(reaped)
	if errno != 0 {
		err = postError("ibv_post_send", errno, qp, c.q.state)
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	s := p.s
	for pause := time.Duration(0); ; pause = min(2*pause+10*time.Microsecond, bindPollMax) {
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return errClosed(op, "connection")
		}
		if sq.ownDone != s+1 {
			cq.pollIntoStash(op)
		}
		done, berr := sq.ownDone == s+1, sq.ownErr
		d.mu.Unlock()
		if done {
			if berr != nil {
				return fmt.Errorf("rpma: %s: binding the memory window failed: %w", op, berr)
			}
			return nil
		}
		if c.closed() {
			return errClosed(op, "connection")
		}
		if err := ctx.Err(); err != nil {
			if c.abandonBind(g, s) {
				return fmt.Errorf("rpma: %s: gave up waiting for the memory window's bind; the library revokes it once its completion is polled: %w", op, err)
			}
			// It completed meanwhile: the grant is the caller's.
			continue
		}
		if pause == 0 {
			runtime.Gosched()
			continue
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// abandonBind gives up on g's bind, sequence number seq, unless it has
// completed by now (then it reports false). The bind is still queued:
// g's window and registration stay (releasing them would let the bind
// fail on a freed window and break the QP), and so does its region's
// registration, until the bind's completion is polled by any poll or wait
// of the connection's CQ: the grant is then revoked on a goroutine of the
// library's. Close revokes it too. c.grants.mu held.
func (c *Conn) abandonBind(g *Grant, seq uint64) bool {
	d := c.dl
	d.mu.Lock()
	if !d.closed {
		sq := c.q.sq
		if sq.ownDone == seq+1 {
			d.mu.Unlock()
			return false
		}
		if sq.abandoned == nil {
			sq.abandoned = make(map[uint64]func())
		}
		sq.abandoned[seq] = func() { c.revokeAbandoned(g) }
	}
	d.mu.Unlock()
	c.grants.add(g) // live until revoked: its region cannot be deregistered before
	return true
}

// revokeAbandoned revokes g, whose abandoned bind has completed; unless
// the connection is closing, whose Close revokes it.
func (c *Conn) revokeAbandoned(g *Grant) {
	if !c.enter() {
		return
	}
	defer c.exit()
	c.grants.mu.Lock()
	defer c.grants.mu.Unlock()
	if err := c.grants.revoke(g); err != nil {
		rpma.Logf(rpma.LogWarning, "conn_grant: revoking a grant whose bind was abandoned: %v", err)
	}
}

// add makes g one of the connection's live grants, bound or with its
// bind still queued (abandonBind): its window and registration stay until
// it is revoked or its connection closes, and its region cannot be
// deregistered before (grants.mu held).
func (s *grantSet) add(g *Grant) {
	if s.live == nil {
		s.live = make(map[*Grant]struct{})
	}
	s.live[g] = struct{}{}
	g.live = true
	s.bound++
	g.mr.grants.Add(1)
	g.leak = leak.Track("conn.Grant")
}

// release frees g's window and registration (grants.mu held).
func (g *Grant) release() error {
	var errs errList
	if err := g.mw.Dealloc(); err != nil {
		errs.add(provider("conn_grant_revoke", err))
	} else {
		g.mw = nil
	}
	if err := g.shadow.Dereg(); err != nil {
		errs.add(provider("conn_grant_revoke", err))
	} else {
		g.shadow = nil
	}
	return errs.err()
}

// Revoke is conn.Grant.Revoke's core; see there.
func (g *Grant) Revoke() error {
	if g == nil || g.conn == nil {
		return nil
	}
	s := &g.conn.grants
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoke(g)
}

// revoke revokes g (s.mu held).
func (s *grantSet) revoke(g *Grant) error {
	if !g.live {
		return nil
	}
	if err := g.release(); err != nil {
		return err
	}
	g.live = false
	s.revoked++
	delete(s.live, g)
	g.mr.grants.Add(-1)
	g.leak.Release()
	return nil
}

// revokeAll revokes every grant of the connection (Close, before the QP
// is destroyed: a bound window holds its QP).
func (s *grantSet) revokeAll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs errList
	for g := range s.live {
		errs.add(s.revoke(g))
	}
	return errs.err()
}

// Descriptor is conn.Grant.Descriptor's core; see there.
func (g *Grant) Descriptor() [DescriptorSize]byte {
	if g == nil {
		return [DescriptorSize]byte{}
	}
	return descriptor(g.addr, g.size, g.rkey, g.usage)
}

// ExtendedDescriptor is conn.Grant.ExtendedDescriptor's core; see there.
func (g *Grant) ExtendedDescriptor() [ExtendedDescriptorSize]byte {
	if g == nil {
		return [ExtendedDescriptorSize]byte{}
	}
	return extendedDescriptor(g.Descriptor(), g.usage)
}

// Addr returns the granted range's address.
func (g *Grant) Addr() uint64 {
	if g == nil {
		return 0
	}
	return g.addr
}

// Size returns the granted range's size.
func (g *Grant) Size() int {
	if g == nil {
		return 0
	}
	return int(g.size)
}

// RKey returns the window's key.
func (g *Grant) RKey() uint32 {
	if g == nil {
		return 0
	}
	return g.rkey
}

// Usage returns the usage granted.
func (g *Grant) Usage() int {
	if g == nil {
		return 0
	}
	return g.usage
}

// Live reports whether the grant is still in force.
func (g *Grant) Live() bool {
	if g == nil || g.conn == nil {
		return false
	}
	g.conn.grants.mu.Lock()
	defer g.conn.grants.mu.Unlock()
	return g.live
}
