package srq

import "github.com/gorpma/rpma/rpma"

// Stats returns a snapshot of the SRQ's counters: receives posted, bytes
// received through its receive CQ, receives refused for room, its
// high-water mark and its receive CQ's counters ([rpma.SRQStats]). It
// allocates nothing; a nil SRQ has zero counters, and a closed one keeps
// those it had.
func (s *SRQ) Stats() rpma.SRQStats { return s.core().Stats() }
