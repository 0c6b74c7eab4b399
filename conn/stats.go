package conn

import "github.com/gorpma/rpma/rpma"

// Stats returns a snapshot of the connection's counters: requests posted
// by kind and their bytes, posts refused for room, busy-poll yields,
// liveness probes, grants, the send queue's high-water mark, and its CQs'
// completions, failures by status and waits ([rpma.ConnStats]). The data
// path keeps them with plain increments under the lock it takes anyway;
// Stats takes that lock for a copy, allocates nothing, and works on a
// nil (zero counters) or closed connection (its counters at Close).
// librpma has no counters.
func (c *Conn) Stats() rpma.ConnStats { return c.core().Stats() }
