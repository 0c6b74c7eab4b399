package core

import (
	"errors"
	"time"

	"github.com/gorpma/rpma/internal/ibv"
)

// Flushed completions after the end.
//
// When a connection ends with its QP in the error state (the library lost
// it for its peer timeout, a QP's fatal asynchronous event, the local
// Disconnect), the provider completes every outstanding request with
// IBV_WC_WR_FLUSH_ERR, but asynchronously: rxe flushes from its completer
// task, possibly after the terminal event has been read. A completion
// wait that then found its CQ empty would end with the ConnEventError
// while flushed completions were still to come, and a caller draining the
// CQ after it would miss them: every outstanding operation must end with
// a completion or the connection's error, and here it would end with
// neither.
//
// So a wait that finds its CQ empty on an ended connection keeps waiting
// while requests that complete on that CQ are outstanding, the QP is in
// the error state, and less than flushWindow has passed since a wait first
// found that; the flushes' completion events wake it, and a timer wakes
// it at the window's end (a provider that does not flush cannot hang it).
// A connection that ended with its QP still working (the other side
// disconnected: librpma leaves the QP alone, and so does this library),
// or whose CQ overran or device failed (completions were dropped), ends
// its waits at once.

// flushWindow bounds how long after the end a wait waits for flushed
// completions.
const flushWindow = time.Second

// endFlush is the state of a connection's end for its CQs' waits, under
// the connection's data lock.
type endFlush struct {
	qp      *ibv.QP
	decided bool      // a wait has checked the QP's state since the end
	expect  bool      // flushed completions are expected
	until   time.Time // the window's end
}

// flushDue reports whether a wait of q, which found nothing to return on
// its ended connection (whose end was caused by cause, nil for an rdma_cm
// event), must go on waiting for flushed completions.
func (q *CQ) flushDue(cause error) bool {
	f := q.ends
	if f == nil {
		return false
	}
	q.dl.mu.Lock()
	if q.dl.closed || !q.owesCompletions() {
		q.dl.mu.Unlock()
		return false
	}
	first := !f.decided
	if first {
		f.decided = true
		f.expect = flushExpected(f.qp, cause)
		f.until = time.Now().Add(flushWindow)
	}
	due := f.expect && time.Now().Before(f.until)
	q.dl.mu.Unlock()
	if first && f.expect {
		q.ev.rewakeAfter(flushWindow)
	}
	return due
}

// owesCompletions reports whether requests that complete on q are
// outstanding (dl held).
func (q *CQ) owesCompletions() bool {
	return (q.sq != nil && q.sq.outstanding() > 0) || (q.rq != nil && q.rq.outstanding() > 0)
}

// flushExpected reports whether the provider will flush qp's outstanding
// requests: it is in the error state, and the end did not drop
// completions.
func flushExpected(qp *ibv.QP, cause error) bool {
	var ae *asyncEventError
	if errors.As(cause, &ae) && (ae.ev.Type == ibv.EventCQErr || ae.ev.Type == ibv.EventDeviceFatal) {
		return false
	}
	s, err := qp.State()
	return err == nil && s == ibv.QPStateErr
}
