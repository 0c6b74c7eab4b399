package rpma

// Counters of connections, CQs and SRQs (a Go addition: librpma has
// none). Each is a snapshot: conn.Conn.Stats, cq.CQ.Stats and
// srq.SRQ.Stats copy the counters, which the data path increments under
// the locks it takes anyway; reading them allocates nothing. Counters
// only grow (high-water marks only rise) for the object's life, and stay
// readable after it is closed.

// ConnStats counts what a connection did (conn.Conn.Stats).
type ConnStats struct {
	// Requests posted, by kind: those the provider accepted (a post
	// refused, for room or for its arguments, is not counted here). A
	// per-operation call (conn.Conn.WriteWait and the rest) counts as
	// the kind it posts; a write-and-flush counts once, under
	// WriteAndFlushes..., not as a write and a flush.
	Writes, WritesWithImm, Reads  uint64
	Sends, SendsWithImm, Recvs    uint64
	FlushesPersistent             uint64
	FlushesVisibility             uint64
	WriteAndFlushesPersistent     uint64
	WriteAndFlushesVisibility     uint64
	AtomicWrites                  uint64
	CompareAndSwaps, FetchAndAdds uint64
	// Bytes of the requests posted: written (writes, with immediate data
	// or not, and the writes of write-and-flushes), read, sent, and the
	// ranges flushed to persistence and to visibility (flushes and
	// write-and-flushes). Atomics move 8 bytes each and are not counted
	// here.
	BytesWritten, BytesRead, BytesSent uint64
	BytesFlushedPersistent             uint64
	BytesFlushedVisibility             uint64
	// BytesReceived is the sum of the successful receive completions'
	// lengths polled from the connection's CQs.
	BytesReceived uint64

	// QueueFull counts posts refused for room (rpma.ErrQueueFull: the
	// send or receive queue, or the CQ, was full); a per-operation call
	// that then waits for room counts each refusal.
	QueueFull uint64
	// Yields counts the busy-poll yields (the data path lets other
	// goroutines run about every 1.5 ms of busy posting).
	Yields uint64
	// Probes counts the liveness probes posted (conn.Config.PeerTimeout).
	Probes uint64
	// GrantsBound counts the grants made (conn.Conn.Grant), a bind
	// abandoned when its ctx ended included; GrantsRevoked those taken
	// back (by Revoke, by the library after an abandoned bind, or by
	// Close).
	GrantsBound, GrantsRevoked uint64
	// SendQueueHighWater is the most send-queue requests ever
	// outstanding at once (posted, not yet retired by a completion).
	SendQueueHighWater int

	// CQ and RCQ are the connection's CQs' counters (RCQ's are zero
	// without a receive CQ).
	CQ, RCQ CQStats
}

// WCStatusCount is the number of work completion statuses (enum
// ibv_wc_status), the length of CQStats.FailedByStatus.
const WCStatusCount = int(WCTMRndvIncomplete) + 1

// CQStats counts what a completion queue did (cq.CQ.Stats, and a
// connection's in ConnStats).
type CQStats struct {
	// Completions counts the work completions polled, the caller's and
	// the library's own (a grant's bind, a liveness probe, the requests
	// it signals to keep the queue moving). Failed counts those that did
	// not succeed, FailedByStatus each by its status (indexed by
	// WCStatus; a status beyond the table is counted under WCGeneralErr).
	Completions    uint64
	Failed         uint64
	FailedByStatus [WCStatusCount]uint64
	// Waits... count the blocking completion waits that ended
	// (cq.CQ.Wait; conn.Conn.Wait, on the CQ it returns, else on the main
	// CQ; the per-operation calls' waits for their completions and for
	// room), by how they ended: a completion or its event, the caller's
	// ctx, a Close, the connection's end (a *rpma.ConnEventError or
	// rpma.ErrConnBroken), anything else (a provider error). The
	// non-blocking TryWait calls, which an event loop makes whenever it
	// likes, are not counted.
	WaitsCompleted, WaitsCtx, WaitsClosed, WaitsConnEnded, WaitsOther uint64
	// HighWater is the most entries ever held for requests that
	// complete on the CQ (posted, their completions not yet polled).
	HighWater int
}

// SRQStats counts what a shared receive queue did (srq.SRQ.Stats).
type SRQStats struct {
	// Recvs counts the receives posted; BytesReceived sums the lengths
	// of the successful receive completions polled from its receive CQ;
	// QueueFull counts the receives refused for room.
	Recvs, BytesReceived, QueueFull uint64
	// HighWater is the most receives ever outstanding at once.
	HighWater int
	// RCQ is its receive CQ's counters (zero without one: its receives
	// then complete on the connections' CQs, and count there).
	RCQ CQStats
}
