package core

import (
	"context"
	"errors"
	"os"
	"sync/atomic"

	"github.com/gorpma/rpma/rpma"
)

// Counters (rpma.ConnStats, rpma.CQStats, rpma.SRQStats): plain
// increments under the data lock the data path holds anyway, in the
// objects that outlive Close (the data lock, the CQs), so that Stats
// reads them after Close too. Waits, which do not hold the data lock,
// count with atomics: a wait costs system calls, an atomic add is noise
// there. Reading copies under the data lock and allocates nothing.

// statKind is the kind of a posted request, for its counters.
type statKind uint8

const (
	statWrite statKind = iota
	statWriteWithImm
	statRead
	statSend
	statSendWithImm
	statRecv
	statFlushPersistent
	statFlushVisibility
	statWriteAndFlushPersistent
	statWriteAndFlushVisibility
	statAtomicWrite
	statCompareAndSwap
	statFetchAndAdd
	numStatKinds
)

// statSlots is the length of the counters' table: a power of two above
// numStatKinds, so that indexing it with a masked kind needs no bounds
// check on the data path.
const statSlots = 16

var _ [statSlots - numStatKinds]struct{} // numStatKinds <= statSlots

// flushStat is the kind of a flush of typ (writeAndFlush: of a
// write-and-flush).
func flushStat(typ rpma.FlushType, writeAndFlush bool) statKind {
	k := statFlushPersistent
	if typ == rpma.FlushVisibility {
		k = statFlushVisibility
	}
	if writeAndFlush {
		k += statWriteAndFlushPersistent - statFlushPersistent
	}
	return k
}

// dataCounters are a connection's (or an SRQ's) counters, under its data
// lock.
type dataCounters struct {
	ops       [statSlots]kindCounters
	queueFull uint64
	yields    uint64
	probes    uint64
	// The high-water mark of an SRQ's receive queue; of a connection's
	// send queue, kept by the queue (workQueue.high) and saved here when
	// the connection closes.
	sqHigh uint64
}

// kindCounters are the posts of one kind and their bytes (a
// write-and-flush's n once).
type kindCounters struct{ posts, bytes uint64 }

// posted counts a post of kind moving n bytes (d.mu held).
func (d *dataLock) posted(kind statKind, n uint64) {
	o := &d.stats.ops[kind&(statSlots-1)]
	o.posts++
	o.bytes += n
}

// queueHigh records o outstanding requests in an SRQ (d.mu held).
func (d *dataLock) queueHigh(o uint64) {
	if o > d.stats.sqHigh {
		d.stats.sqHigh = o
	}
}

// cqCounters are a CQ's: completions under its data lock, waits atomic.
type cqCounters struct {
	completions   uint64
	failed        [rpma.WCStatusCount]uint64
	bytesReceived uint64 // successful receive completions' lengths
	// How its waits ended: completed, ctx, closed, connection's end, other.
	waits [5]atomic.Uint64
}

// failedWith counts a failed completion of status st (dl held).
func (s *cqCounters) failedWith(st rpma.WCStatus) {
	if int(st) >= len(s.failed) {
		st = rpma.WCGeneralErr
	}
	s.failed[st]++
}

// waited counts a wait that ended with err.
func (s *cqCounters) waited(err error) {
	i := 0
	if err != nil {
		i = waitEnd(err)
	}
	s.waits[i].Add(1)
}

// waitEnd classifies a wait's error for cqCounters.waits (a
// *rpma.ConnEventError matches rpma.ErrConnBroken).
func waitEnd(err error) int {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return 1
	case errors.Is(err, os.ErrClosed):
		return 2
	case errors.Is(err, rpma.ErrConnBroken):
		return 3
	}
	return 4
}

// Stats returns the CQ's counters (rpma.CQStats).
func (q *CQ) Stats() rpma.CQStats {
	if q == nil || q.dl == nil {
		return rpma.CQStats{}
	}
	q.dl.mu.Lock()
	defer q.dl.mu.Unlock()
	return q.statsLocked()
}

// statsLocked is Stats with dl held.
func (q *CQ) statsLocked() rpma.CQStats {
	if q == nil {
		return rpma.CQStats{}
	}
	s := rpma.CQStats{
		Completions:    q.stats.completions,
		FailedByStatus: q.stats.failed,
		WaitsCompleted: q.stats.waits[0].Load(),
		WaitsCtx:       q.stats.waits[1].Load(),
		WaitsClosed:    q.stats.waits[2].Load(),
		WaitsConnEnded: q.stats.waits[3].Load(),
		WaitsOther:     q.stats.waits[4].Load(),
		HighWater:      int(q.budget.high),
	}
	for _, n := range s.FailedByStatus {
		s.Failed += n
	}
	return s
}

// Stats is conn.Conn.Stats's core; see there.
func (c *Conn) Stats() rpma.ConnStats {
	if c == nil || c.dl == nil {
		return rpma.ConnStats{}
	}
	var s rpma.ConnStats
	c.grants.mu.Lock()
	s.GrantsBound, s.GrantsRevoked = c.grants.bound, c.grants.revoked
	c.grants.mu.Unlock()
	d := c.dl
	d.mu.Lock()
	defer d.mu.Unlock()
	var p, b [numStatKinds]uint64
	for k := range p {
		p[k], b[k] = d.stats.ops[k].posts, d.stats.ops[k].bytes
	}
	s.Writes, s.WritesWithImm, s.Reads = p[statWrite], p[statWriteWithImm], p[statRead]
	s.Sends, s.SendsWithImm, s.Recvs = p[statSend], p[statSendWithImm], p[statRecv]
	s.FlushesPersistent, s.FlushesVisibility = p[statFlushPersistent], p[statFlushVisibility]
	s.WriteAndFlushesPersistent, s.WriteAndFlushesVisibility = p[statWriteAndFlushPersistent], p[statWriteAndFlushVisibility]
	s.AtomicWrites, s.CompareAndSwaps, s.FetchAndAdds = p[statAtomicWrite], p[statCompareAndSwap], p[statFetchAndAdd]
	s.BytesWritten = b[statWrite] + b[statWriteWithImm] + b[statWriteAndFlushPersistent] + b[statWriteAndFlushVisibility]
	s.BytesRead = b[statRead]
	s.BytesSent = b[statSend] + b[statSendWithImm]
	s.BytesFlushedPersistent = b[statFlushPersistent] + b[statWriteAndFlushPersistent]
	s.BytesFlushedVisibility = b[statFlushVisibility] + b[statWriteAndFlushVisibility]
	s.QueueFull, s.Yields, s.Probes = d.stats.queueFull, d.stats.yields, d.stats.probes
	s.SendQueueHighWater = int(d.stats.sqHigh)
	if !d.closed && c.q.sq != nil {
		s.SendQueueHighWater = int(c.q.sq.high)
	}
	s.CQ, s.RCQ = c.cq.statsLocked(), c.rcq.statsLocked()
	s.BytesReceived = c.cq.receivedLocked() + c.rcq.receivedLocked()
	return s
}

// receivedLocked is the CQ's received bytes (dl held; 0 for a nil q).
func (q *CQ) receivedLocked() uint64 {
	if q == nil {
		return 0
	}
	return q.stats.bytesReceived
}
