package cq

import "github.com/gorpma/rpma/rpma"

// Stats returns a snapshot of the CQ's counters: completions polled
// (failed ones by status), its waits by how they ended, and its
// high-water mark ([rpma.CQStats]). It allocates nothing; a nil CQ has
// zero counters, and a closed one keeps those it had.
func (q *CQ) Stats() rpma.CQStats { return q.core().Stats() }
