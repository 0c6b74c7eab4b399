package core

import (
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// librpma's SRQ defaults as its code has them (src/srq_cfg.c,
// RPMA_DEFAULT_SRQ_SIZE); its header says 100.
const (
	DefaultSRQSize    = 20
	DefaultSRQRCQSize = 20
)

// SRQ mirrors struct rpma_srq: a shared receive queue, with its own
// receive CQ unless configured without one.
type SRQ struct {
	life
	dl    dataLock // Recv's, and its receive CQ's polls
	peer  *Peer
	srq   *ibv.SRQ
	rcq   *CQ
	tbl   *srqTable
	size  int
	users atomic.Int64 // connection requests and connections using it
	leak  *leak.Handle
}

// SRQParams is the implementation side of srq.Config, which converts to
// it (documentation lives there). As given to ResolveSRQParams, a zero
// field means that field's default and NoQueue as RCQSize means no
// receive CQ; ResolveSRQParams returns the sizes to use, in which an
// RCQSize of 0 means no receive CQ.
type SRQParams struct {
	RQSize  int
	RCQSize int
}

// ResolveSRQParams returns the sizes to use for p: the defaults for nil,
// else p with zero fields replaced by their defaults and NoQueue by 0,
// validated. It is the one place where srq.Config's zero values are
// interpreted.
func ResolveSRQParams(op string, p *SRQParams) (SRQParams, error) {
	r := SRQParams{RQSize: DefaultSRQSize, RCQSize: DefaultSRQRCQSize}
	if p == nil {
		return r, nil
	}
	if p.RQSize != 0 {
		r.RQSize = p.RQSize // an SRQ of 0 receives is no SRQ: no NoQueue here
	}
	r.RCQSize = sizeOr(p.RCQSize, DefaultSRQRCQSize)
	switch {
	case r.RQSize < 1 || r.RQSize > MaxQueueSize:
		return SRQParams{}, rpmaerr.Inval(op, "RQSize %d out of range [1, %d] (0: the default, %d)", r.RQSize, MaxQueueSize, DefaultSRQSize)
	case r.RCQSize < 0 || r.RCQSize > MaxQueueSize:
		return SRQParams{}, rpmaerr.Inval(op, "RCQSize %d out of range [1, %d] (0: the default, %d; NoRCQ: no receive CQ)", r.RCQSize, MaxQueueSize, DefaultSRQRCQSize)
	}
	return r, nil
}

// NewSRQ mirrors rpma_srq_new, with the sizes prm asks for (nil: the
// defaults; see ResolveSRQParams).
func NewSRQ(p *Peer, prm *SRQParams) (*SRQ, error) {
	const op = "srq_new"
	sizes, err := ResolveSRQParams(op, prm)
	if err != nil {
		return nil, err
	}
	if err := p.acquire(op); err != nil {
		return nil, err
	}
	s, err := newSRQ(op, p, sizes.RQSize, sizes.RCQSize)
	if err != nil {
		p.release()
		return nil, err
	}
	return s, nil
}

func newSRQ(op string, p *Peer, rqSize, rcqSize int) (*SRQ, error) {
	a := &p.attr
	if a.MaxSRQWR > 0 && rqSize > a.MaxSRQWR {
		return nil, rpmaerr.Inval(op, "RQSize %d exceeds the device's max_srq_wr %d", rqSize, a.MaxSRQWR)
	}
	if a.MaxCQE > 0 && rcqSize > a.MaxCQE {
		return nil, rpmaerr.Inval(op, "RCQSize %d exceeds the device's max_cqe %d", rcqSize, a.MaxCQE)
	}
	srq, _, err := p.pd.CreateSRQ(rqSize)
	if err != nil {
		return nil, providerMsg(op, err, "max_wr=%d, max_sge=1", rqSize)
	}
	s := &SRQ{peer: p, srq: srq, size: rqSize}
	s.dl.tune, s.dl.period = p.tune, yieldCounts.Load()
	var budget *cqBudget
	if rcqSize > 0 {
		if s.rcq, err = newCQ(op, p.ctx, &s.dl, rcqSize, nil, false, DefaultSpinLimit); err != nil {
			srq.Destroy()
			return nil, err
		}
		s.rcq.maxCQE = a.MaxCQE
		budget = &s.rcq.budget
	}
	s.tbl = newSRQTable(&s.dl, rqSize, budget)
	if s.rcq != nil {
		s.rcq.srq, s.rcq.srqLocked = s.tbl, true
	}
	s.leak = leak.Track("srq.SRQ")
	s.open()
	return s, nil
}

// RCQ mirrors rpma_srq_get_rcq: nil when the SRQ has no receive CQ.
func (s *SRQ) RCQ() *CQ {
	if s == nil {
		return nil
	}
	return s.rcq
}

// Size returns the number of receives the SRQ holds.
func (s *SRQ) Size() int {
	if s == nil {
		return 0
	}
	return s.size
}

// acquire registers a connection (request) using the SRQ.
func (s *SRQ) acquire(op string) error {
	if !s.enter() {
		return errClosed(op, "SRQ")
	}
	s.users.Add(1)
	s.exit()
	return nil
}

func (s *SRQ) release() { s.users.Add(-1) }

// Recv mirrors rpma_srq_recv.
func (s *SRQ) Recv(dst *MR, off, n int, ctx uint64) error {
	const op = "srq_recv"
	if s == nil {
		return errNil(op, "SRQ")
	}
	if !s.enter() {
		return errClosed(op, "SRQ")
	}
	defer s.exit()
	laddr, lkey, err := localRange(op, s.peer, dst, UsageRecv, off, n)
	if err != nil {
		return err
	}
	t := s.tbl
	s.dl.mu.Lock()
	defer s.dl.mu.Unlock()
	i, err := t.take(ctx)
	if err != nil {
		s.dl.stats.queueFull++
		return err
	}
	if errno := s.srq.PostRecv(wrKindSRQ|uint64(i), laddr, uint32(n), lkey); errno != 0 {
		t.put(i)
		if errno == syscall.ENOMEM || errno == syscall.ENOSPC {
			s.dl.stats.queueFull++
			return errSRQFull
		}
		return postError("ibv_post_srq_recv", errno, nil, nil)
	}
	s.dl.posted(statRecv, uint64(n))
	s.dl.queueHigh(uint64(len(t.ctx) - len(t.free)))
	return nil
}

// Stats returns the SRQ's counters (rpma.SRQStats); also after Close.
func (s *SRQ) Stats() rpma.SRQStats {
	if s == nil {
		return rpma.SRQStats{}
	}
	s.dl.mu.Lock()
	defer s.dl.mu.Unlock()
	return rpma.SRQStats{
		Recvs:         s.dl.stats.ops[statRecv].posts,
		BytesReceived: s.rcq.receivedLocked(),
		QueueFull:     s.dl.stats.queueFull,
		HighWater:     int(s.dl.stats.sqHigh),
		RCQ:           s.rcq.statsLocked(),
	}
}

// Close is srq.SRQ.Close's core; see there.
func (s *SRQ) Close() error {
	if s == nil {
		return nil
	}
	s.lock()
	defer s.unlock()
	if s.finished() {
		return nil
	}
	if n := s.users.Load(); n > 0 {
		return rpmaerr.New("srq_delete", rpma.CodeProvider, syscall.EBUSY,
			"%d connection(s) or request(s) still use the SRQ: close them first", n)
	}
	s.markClosed()
	s.dl.mu.Lock()
	s.dl.closed = true
	s.dl.mu.Unlock()
	err := provider("srq_delete", s.srq.Destroy())
	if err == nil {
		err = s.rcq.close()
	}
	if err != nil {
		s.closeFailed() // what is left is destroyed by a retried Close
		return err
	}
	s.peer.release()
	s.leak.Release()
	return nil
}

// flushBuf is the target of the emulated flush's 8-byte RDMA read: one
// page mapped shared (so that it survives a fork, as librpma's) with its
// first 8 bytes registered.
type flushBuf struct {
	mem  []byte
	mr   *ibv.MR
	addr uint64
	lkey uint32
}

func newFlushBuf(p *Peer) (*flushBuf, error) {
	mem, err := mapPage()
	if err != nil {
		return nil, rpmaerr.New("mmap", rpma.CodeNoMem, errnoOf(err), "flush buffer")
	}
	mr, err := p.pd.RegMR(unsafe.Pointer(unsafe.SliceData(mem)), 8, UsageToAccess(UsageReadDst, false, p.iwarp))
	if err != nil {
		unmapPage(mem)
		return nil, regError("flush_new", err, len(mem), "registering the connection's flush buffer (a page)")
	}
	return &flushBuf{mem: mem, mr: mr, addr: mr.Addr, lkey: mr.LKey}, nil
}

func (f *flushBuf) destroy() error {
	if f == nil {
		return nil
	}
	if err := f.mr.Dereg(); err != nil {
		return provider("flush_delete", err) // still registered: keep the page
	}
	if f.mem != nil {
		if err := unmapPage(f.mem); err != nil {
			return rpmaerr.New("munmap", rpma.CodeInval, errnoOf(err), "flush buffer")
		}
		f.mem = nil
	}
	return nil
}
