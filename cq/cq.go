package cq

import "github.com/gorpma/rpma/internal/core"

// CQ mirrors struct rpma_cq: a completion queue of a connection (its main
// CQ, or its receive CQ) with its completion channel. CQs are created,
// armed (ibv_req_notify_cq) and destroyed by their connection: get them
// with conn.Conn.CQ and conn.Conn.RCQ, and do not use them after the
// connection's Close. There is no CQ.Close.
//
// FD and Size are safe for concurrent use by multiple goroutines.
type CQ core.CQ

func (q *CQ) core() *core.CQ { return (*core.CQ)(q) }

// FD mirrors rpma_cq_get_fd: the fd of the CQ's completion channel (the
// connection's shared channel when conn.Config.SharedCompChannel is set),
// non-blocking and ready for epoll. It returns -1 when q is nil or its
// connection is closed.
func (q *CQ) FD() int { return q.core().FD() }

// Size returns the number of entries the CQ actually has: the provider may
// round the configured size up (rxe makes 10 into 15).
func (q *CQ) Size() int { return q.core().Size() }
