package core

import (
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
)

// Submission combining: requests of the waiting calls (opwait.go) that
// are ready together go to the provider as one chain, one crossing and
// one doorbell (ibv.QP.PostBatch), through the post protocol (post.go).
//
// A waiting call that starts while other such calls are in progress on
// its CQ (runWait's combine) does not post its request itself: postSend
// puts it, with its claim, on the connection's combining list
// (dataLock.comb, a lock-free stack), and the call yields (the turn it
// took after its completion before, tuning.go). Back from the yield, a
// request still undecided is its own caller's to post: the caller takes
// the data lock (TryLock, else Lock) and, unless the holder before it
// decided the request meanwhile, takes the whole list and posts it in
// push order, up to ibv.MaxBatch requests a chain (combineLocked). Each
// request is then decided: posted (its completion comes to its claim as
// any other's), refused for room (the call waits for room, as postClaimed
// does for any post, and then posts alone), or failed (the error is the
// call's). The list is taken only under the data lock, and whoever takes
// it decides everything on it before unlocking, so a caller that gets
// the lock and finds its request undecided finds it on the list; every
// caller that pushed takes the lock itself unless decided, so no request
// waits on the list for anyone else's unlock. No request waits behind a
// later one: the chain is in push order and takes every request pushed
// before the list was taken.
//
// Where completions come inside the post (6.1's loopback rxe), G
// goroutines on one vCPU take turns: each pushes and yields, and the
// first back posts all G in one crossing, whose reap finds up to reapMax
// completions. One goroutine alone (runWait's combine false) posts as
// before: postSend's one added check is of cl.combine. The mirror's posts
// (no claim) and the kinds that are not one plain request without
// immediate data (flushes, atomics, write-and-flush, receives) post as
// before: they do not combine.

// combinable reports whether a plain request of op can ride in a chain
// (ibv.BatchWR carries no immediate data).
func combinable(op ibv.SendOp) bool {
	return op == ibv.OpRDMAWrite || op == ibv.OpRDMARead || op == ibv.OpSend
}

// postCombined posts the signaled plain request a for cl through the
// combining list (see above), followed by the emulated flush's read when
// flush (a write-and-flush), and returns the outcome of its post.
func (c *Conn) postCombined(op string, ctx uint64, a *sendArgs, flush bool, cl *opClaim) error {
	if c == nil || c.dl == nil {
		return c.lockDataErr(op)
	}
	d := c.dl
	cl.combined = true
	cl.req, cl.reqCtx, cl.reqFlush, cl.postErr = *a, ctx, flush, nil
	cl.decided.Store(false)
	for {
		h := d.comb.Load()
		cl.next = h
		if d.comb.CompareAndSwap(h, cl) {
			break
		}
	}
	gosched()
	if !cl.decided.Load() {
		if !d.mu.TryLock() {
			d.mu.Lock()
		}
		if cl.decided.Load() {
			d.mu.Unlock()
		} else {
			c.combineLocked(d)
			// No periodic yield (unlockAfterCrossing): this call
			// yielded once already. With it the combiner took a second
			// turn now and then: BenchmarkGoroutines/Write64/G=16,
			// counted on 6.1, p99 1.22 times p50 with it, 1.05 without.
			d.mu.Unlock()
		}
	}
	return cl.postErr
}

// combineLocked takes the combining list and posts it (d.mu held), in
// push order, in chains of up to ibv.MaxBatch, deciding every request.
// A chain is what fits of the rest: the reap of one chain's crossing may
// make room for the next (on 6.1's loopback rxe a chain completes inside
// its post), and only when none fits is the rest refused for room.
func (c *Conn) combineLocked(d *dataLock) {
	var head *opClaim
	for cl := d.comb.Swap(nil); cl != nil; {
		next := cl.next
		cl.next = head
		head = cl
		cl = next
	}
	for head != nil {
		if d.closed || c.state.broken.Load() != nil {
			// lockDataErr's answers, without its lock (held here).
			var err error
			if d.closed {
				err = errClosed(head.op, "connection")
			} else {
				err = c.state.err()
			}
			head = decideAll(head, err)
			continue
		}
		head = c.postChain(d, head)
	}
}

// decideAll decides every request of the list from head with err, and
// returns nil.
func decideAll(head *opClaim, err error) *opClaim {
	for head != nil {
		cl := head
		head = cl.next
		cl.next = nil
		cl.postErr = err
		cl.decided.Store(true) // its caller may go on (and reuse cl) at once
	}
	return nil
}

// postChain posts the first requests of the list from head, up to
// ibv.MaxBatch work requests and as many as fit in the queue and the CQ,
// as one chain through the post protocol (post.go), decides each, and
// returns the rest of the list (d.mu held). When none fits, it refuses
// the whole list for room. A write-and-flush request (opClaim.reqFlush)
// is two work requests, as WriteAndFlush posts them: the write, claimed
// for nobody (absorbed), and the emulated flush's read, claimed for its
// call.
func (c *Conn) postChain(d *dataLock, head *opClaim) *opClaim {
	sq, cq, qp := c.q.sq, c.q.cq, c.q.qp
	// Step 2: reserve for all, else for as many as fit (reserve polled).
	n, slots := 0, uint64(0) // requests, work requests
	for cl := head; cl != nil && slots+cl.reqSlots() <= MaxBatch; cl = cl.next {
		n++
		slots += cl.reqSlots()
	}
	s, err := sq.reserve(slots)
	if err != nil {
		free := sq.free()
		n, slots = 0, 0
		for cl := head; cl != nil && slots+cl.reqSlots() <= min(free, MaxBatch); cl = cl.next {
			n++
			slots += cl.reqSlots()
		}
		if n == 0 {
			for cl := head; cl != nil; cl = cl.next {
				d.stats.queueFull++
			}
			return decideAll(head, err)
		}
		if s, err = sq.reserve(slots); err != nil {
			return decideAll(head, err) // cannot happen: free counted the room
		}
	}
	var (
		cls  [MaxBatch]*opClaim
		last [MaxBatch]int // the index of each request's last work request
		uns  [MaxBatch]int // the run of unsignaled requests after each work request
	)
	p := queuePost{q: sq, s: s, saved: sq.unsignaled}
	if c.q.batch == nil {
		c.q.batch = make([]ibv.BatchWR, MaxBatch) // once per connection
	}
	wrs := c.q.batch[:slots]
	// Step 3: every request is a waiting call's, signaled.
	j := 0
	for i := range n {
		cl := head
		head = head.next
		cl.next = nil
		cls[i] = cl
		a := &cl.req
		if cl.reqFlush {
			sl, f := p.slot(uint64(j), false)
			*sl = wrSlot{ctx: cl.reqCtx}
			p.claim(uint64(j), nil)
			uns[j] = sq.unsignaled
			wrs[j] = ibv.BatchWR{WRID: p.wrID(uint64(j)), Op: ibv.OpRDMAWrite, Flags: f,
				LAddr: a.laddr, Len: a.length, LKey: a.lkey, RAddr: a.raddr, RKey: a.rkey}
			j++
			sl, f = p.slot(uint64(j), true)
			*sl = wrSlot{ctx: cl.reqCtx, user: true}
			p.claim(uint64(j), cl)
			uns[j] = sq.unsignaled
			fb := c.q.flush
			wrs[j] = ibv.BatchWR{WRID: p.wrID(uint64(j)), Op: ibv.OpRDMARead, Flags: f,
				LAddr: fb.addr, Len: 8, LKey: fb.lkey, RAddr: a.raddr, RKey: a.rkey}
		} else {
			sl, f := p.slot(uint64(j), true)
			*sl = wrSlot{ctx: cl.reqCtx, user: true}
			p.claim(uint64(j), cl)
			uns[j] = sq.unsignaled
			wrs[j] = ibv.BatchWR{WRID: p.wrID(uint64(j)), Op: a.op, Flags: a.flags | f,
				LAddr: a.laddr, Len: a.length, LKey: a.lkey, RAddr: a.raddr, RKey: a.rkey}
		}
		last[i] = j
		j++
	}
	// Step 4: one crossing.
	r := cq.reap()
	var (
		errno          syscall.Errno
		posted, reaped int // posted: work requests
	)
	if slots == 1 {
		w := &wrs[0]
		errno, reaped = qp.PostSend(w.WRID, w.Op, w.Flags, w.LAddr, w.Len, w.LKey, w.RAddr, w.RKey, 0, r)
		if errno == 0 {
			posted = 1
		}
	} else {
		errno, posted, reaped = qp.PostBatch(wrs, r)
	}
	// Step 5: roll back what the provider refused. A posted write whose
	// flush was refused keeps its slot (a later completion retires it).
	if errno != 0 {
		unsignaled := p.saved
		if posted > 0 {
			unsignaled = uns[posted-1]
		}
		p.rollback(uint64(posted), slots, unsignaled)
		for i := uint64(posted); i < slots; i++ {
			*p.record(i) = wrSlot{}
		}
	}
	// Step 6.
	cq.reaped(reaped)
	// Step 7.
	if errno != 0 {
		err = postError("ibv_post_send", errno, qp, c.q.state)
	}
	for i := range n {
		if last[i] < posted {
			a := &cls[i].req
			d.posted(a.stat, uint64(a.length))
		}
	}
	// Decide each: its caller may go on (and reuse its claim) at once.
	for i := range n {
		cl := cls[i]
		cl.postErr = nil
		if last[i] >= posted {
			cl.postErr = err
		}
		cl.decided.Store(true)
	}
	return head
}

// reqSlots is how many work requests cl's request takes.
func (cl *opClaim) reqSlots() uint64 {
	if cl.reqFlush {
		return 2
	}
	return 1
}
