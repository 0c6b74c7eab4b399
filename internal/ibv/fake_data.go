//go:build rpma_fake && linux

package ibv

import (
	"encoding/binary"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Work completion statuses and opcodes (enum ibv_wc_status, ibv_wc_opcode)
// the fake produces.
const (
	WCSuccess       = 0  // IBV_WC_SUCCESS
	WCLocLenErr     = 1  // IBV_WC_LOC_LEN_ERR
	WCLocProtErr    = 4  // IBV_WC_LOC_PROT_ERR
	WCWRFlushErr    = 5  // IBV_WC_WR_FLUSH_ERR
	WCMWBindErr     = 6  // IBV_WC_MW_BIND_ERR
	WCRemInvReqErr  = 9  // IBV_WC_REM_INV_REQ_ERR
	WCRemAccessErr  = 10 // IBV_WC_REM_ACCESS_ERR
	WCRetryExcErr   = 12 // IBV_WC_RETRY_EXC_ERR
	wcOpSend        = 0
	wcOpRDMAWrite   = 1
	wcOpRDMARead    = 2
	wcOpCompSwap    = 3
	wcOpFetchAdd    = 4
	wcOpBindMW      = 5
	wcOpRecv        = 128
	wcOpRecvRDMAImm = 129
)

// QP states the fake uses besides RTS and ERR.
const qpStateInit = 1

// memKey is what an lkey or rkey names: an MR, or a bound memory window.
type memKey struct {
	base   unsafe.Pointer // the memory at addr
	addr   uint64
	length uint64
	access int
	mr     *MR
}

var keys = map[uint32]*memKey{} // live keys (fab)

var nextIndex uint32 // key index (fab)

func newMemKey() uint32 {
	nextIndex++
	return nextIndex<<8 | 0x5a
}

// mem returns the n bytes at addr under key k when k allows access (fab
// held). ok is false for an unknown key, a range outside it, or missing
// access.
func mem(key uint32, addr uint64, n uint32, access int) ([]byte, bool) {
	k := keys[key]
	if k == nil || k.access&access != access || addr < k.addr || addr+uint64(n) > k.addr+k.length || addr+uint64(n) < addr {
		return nil, false
	}
	return unsafe.Slice((*byte)(unsafe.Add(k.base, addr-k.addr)), n), true
}

// MR is a memory registration.
type MR struct {
	Addr   uint64
	Length uint64
	LKey   uint32
	RKey   uint32
	dead   bool
}

// RegMR registers length bytes at addr.
func (pd *PD) RegMR(addr unsafe.Pointer, length int, access int) (*MR, error) {
	if e := injectHit(siteRegMR); e != 0 {
		return nil, callError("ibv_reg_mr", e)
	}
	if length <= 0 || addr == nil {
		return nil, callError("ibv_reg_mr", syscall.EINVAL)
	}
	fab.Lock()
	defer fab.Unlock()
	k := newMemKey()
	m := &MR{Addr: uint64(uintptr(addr)), Length: uint64(length), LKey: k, RKey: k}
	keys[k] = &memKey{base: addr, addr: m.Addr, length: m.Length, access: access | AccessLocalRead, mr: m}
	objInc(ObjMR)
	return m, nil
}

// AccessLocalRead is implied by every registration (a local read needs no
// flag); the fake checks it like the others.
const AccessLocalRead = 1 << 30

// Dereg deregisters the MR; a no-op on nil or deregistered.
func (m *MR) Dereg() error {
	if m == nil {
		return nil
	}
	fab.Lock()
	defer fab.Unlock()
	if m.dead {
		return nil
	}
	if e := injectHit(siteDeregMR); e != 0 {
		return callError("ibv_dereg_mr", e)
	}
	m.dead = true
	delete(keys, m.LKey)
	objDec(ObjMR)
	return nil
}

// AdviseMR checks the range's key and does nothing else.
func (pd *PD) AdviseMR(advice int, flags uint32, addr uint64, length uint32, lkey uint32) error {
	if e := injectHit(siteAdviseMR); e != 0 {
		return callError("ibv_advise_mr", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if _, ok := mem(lkey, addr, length, 0); !ok {
		return callError("ibv_advise_mr", syscall.EINVAL)
	}
	return nil
}

// FakeTiming is when the fake delivers the completions of a QP's send
// queue.
type FakeTiming int32

// The timings.
const (
	FakeNow     FakeTiming = iota // at post time (rxe's loopback on 6.1)
	FakeLater                     // held until FakeRelease
	FakeNever                     // held until the QP fails (flushed then)
	fakeInherit                   // a QP's own: follow SetFakeTiming
)

var fakeTiming atomic.Int32

// SetFakeTiming sets when the completions of every QP's send queue are
// delivered (a QP's own SetFakeTiming overrides it). The operations
// themselves (the bytes they move, their errors) happen at post time.
func SetFakeTiming(t FakeTiming) { fakeTiming.Store(int32(t)) }

// held is a work request whose completion is not delivered yet.
type held struct {
	wc       WC
	signaled bool
	timing   FakeTiming
}

// QP is a queue pair.
type QP struct {
	key     uintptr
	num     uint32
	state   int
	sendCQ  *CQ
	recvCQ  *CQ
	srq     *SRQ
	maxSend int
	maxRecv int
	sigAll  bool
	timing  FakeTiming
	peer    *QP
	held    []held   // send completions not delivered yet, in order
	recvs   []recvWR // posted receives (own receive queue)
	waiting []inSend // sends that found no receive (infinite RNR retry)
	dead    bool
}

type recvWR struct {
	wrID  uint64
	laddr uint64
	len   uint32
	lkey  uint32
}

// inSend is a send (or write with immediate) that found no receive: it
// waits at the receiver, as with an infinite RNR retry count; its sender
// had its completion at post time.
type inSend struct {
	from     *QP
	data     []byte
	imm      uint32
	isImm    bool
	writeImm bool
	writeLen uint32 // a write with immediate data's length
}

// HasAtomicWrite reports false: the fake has no native atomic write.
func (q *QP) HasAtomicWrite() bool { return false }

// SetFakeTiming sets when this QP's send completions are delivered.
func (q *QP) SetFakeTiming(t FakeTiming) {
	fab.Lock()
	defer fab.Unlock()
	q.timing = t
}

// FakeRelease delivers the completions held by FakeLater, of every QP,
// and returns how many work requests it completed.
func FakeRelease() int {
	fab.Lock()
	defer fab.Unlock()
	n := 0
	for _, q := range qps {
		n += q.release(FakeLater)
	}
	return n
}

// FakeRelease delivers this QP's held completions (FakeLater and
// FakeNever) and returns how many work requests it completed.
func (q *QP) FakeRelease() int {
	fab.Lock()
	defer fab.Unlock()
	return q.release(-1)
}

// FakeReleaseAfterPolls delivers this QP's held completions at the n-th
// ibv_poll_cq (Poll or ArmPoll) of its send CQ from now, just before
// that poll: a completion that comes while a wait polls (a spin).
func (q *QP) FakeReleaseAfterPolls(n int) {
	fab.Lock()
	defer fab.Unlock()
	q.sendCQ.relQP, q.sendCQ.relLeft = q, n
}

// release completes the held requests of timing t (-1: all) from the
// front, in order (fab held).
func (q *QP) release(t FakeTiming) int {
	n := 0
	for len(q.held) > 0 && (t < 0 || q.held[0].timing == t) {
		h := q.held[0]
		q.held = q.held[1:]
		if h.signaled || h.wc.Status != WCSuccess {
			q.sendCQ.push(h.wc)
		}
		n++
	}
	return n
}

var qps = map[uintptr]*QP{} // live QPs (fab)

func (q *QP) effTiming() FakeTiming {
	if q.timing != fakeInherit {
		return q.timing
	}
	return FakeTiming(fakeTiming.Load())
}

// State returns the QP's state.
func (q *QP) State() (int, error) {
	if e := injectHit(siteQueryQP); e != 0 {
		return 0, callError("ibv_query_qp", e)
	}
	fab.Lock()
	defer fab.Unlock()
	return q.state, nil
}

// ToError moves the QP to the error state: its outstanding work requests
// complete with flush errors.
func (q *QP) ToError() error {
	if e := injectHit(siteModifyQP); e != 0 {
		return callError("ibv_modify_qp", e)
	}
	fab.Lock()
	defer fab.Unlock()
	q.toError()
	return nil
}

// FakeBreak moves the QP to the error state as a fatal provider error
// would, and reports IBV_EVENT_QP_FATAL.
func (q *QP) FakeBreak() {
	fab.Lock()
	defer fab.Unlock()
	q.toError()
	asyncEvent(EventQPFatal, q.key)
}

// toError (fab held) flushes what is outstanding: held send completions
// (those with an error of their own keep it), posted receives; sends
// waiting for a receive at this QP are dropped.
func (q *QP) toError() {
	if q.state == QPStateErr {
		return
	}
	q.state = QPStateErr
	for _, h := range q.held {
		if h.wc.Status == WCSuccess {
			h.wc.Status = WCWRFlushErr
		}
		q.sendCQ.push(h.wc)
	}
	q.held = nil
	if q.srq == nil {
		for _, r := range q.recvs {
			q.recvCQ.push(WC{WRID: r.wrID, Status: WCWRFlushErr, Opcode: wcOpRecv, QPNum: q.num})
		}
		q.recvs = nil
	}
	q.waiting = nil
}

// settle delivers, from the front, the held completions whose timing is
// FakeNow (fab held): completions come in order.
func (q *QP) settle() {
	for len(q.held) > 0 && q.held[0].timing == FakeNow {
		q.release(FakeNow)
	}
}

// wr is one send work request.
type wr struct {
	wrID       uint64
	op         SendOp
	flags      uint32
	laddr      uint64
	len        uint32
	lkey       uint32
	raddr      uint64
	rkey       uint32
	imm        uint32
	compareAdd uint64
	swap       uint64
	inline     []byte
	bind       *MW
	bindRKey   uint32
	bindMR     *MR
	bindAddr   uint64
	bindLen    uint64
	bindAccess int
	isBind     bool
	isInline   bool
}

// post posts wrs as one chain (fab held) and returns the errno of the
// first refused and how many were accepted.
func (q *QP) post(wrs []wr) (syscall.Errno, int) {
	if q.dead {
		return syscall.EINVAL, 0
	}
	if q.state == qpStateInit {
		return syscall.EINVAL, 0
	}
	for i := range wrs {
		if len(q.held) >= q.maxSend {
			return syscall.ENOMEM, i
		}
		q.execute(&wrs[i])
	}
	q.settle()
	return 0, len(wrs)
}

// execute runs one work request at post time and holds its completion
// (fab held).
func (q *QP) execute(w *wr) {
	signaled := q.sigAll || w.flags&SendSignaled != 0
	h := held{wc: WC{WRID: w.wrID, QPNum: q.num}, signaled: signaled, timing: q.effTiming()}
	if q.state == QPStateErr {
		h.wc.Status = WCWRFlushErr
		h.timing = FakeNow
		q.sendCQ.push(h.wc)
		return
	}
	fail := func(status uint32, peerToo bool) {
		h.wc.Status = status
		h.timing = FakeNow
		q.held = append(q.held, h)
		q.toError()
		if peerToo && q.peer != nil {
			q.peer.toError()
		}
	}
	p := q.peer
	if w.isBind {
		h.wc.Opcode = wcOpBindMW
		if st := bindMW(w); st != WCSuccess {
			fail(st, false)
			return
		}
		q.held = append(q.held, h)
		return
	}
	if p == nil || p.dead || p.state == QPStateErr {
		// A peer in the error state drops what arrives without an
		// answer: the request stays outstanding (rxe retries) until this
		// QP fails.
		h.timing = FakeNever
		q.held = append(q.held, h)
		return
	}
	switch w.op {
	case OpRDMAWrite, OpRDMAWriteWithImm:
		h.wc.Opcode = wcOpRDMAWrite
		var src []byte
		if w.isInline {
			src = w.inline
		} else if w.len > 0 {
			var ok bool
			if src, ok = mem(w.lkey, w.laddr, w.len, AccessLocalRead); !ok {
				fail(WCLocProtErr, false)
				return
			}
		}
		if len(src) > 0 {
			dst, ok := mem(w.rkey, w.raddr, uint32(len(src)), AccessRemoteWrite)
			if !ok {
				fail(WCRemAccessErr, true)
				return
			}
			copy(dst, src)
		}
		if w.op == OpRDMAWriteWithImm {
			if !p.deliver(q, nil, w.imm, true, true, uint32(len(src))) {
				p.waiting = append(p.waiting, inSend{imm: w.imm, isImm: true, writeImm: true, writeLen: uint32(len(src)), from: q})
			}
		}
	case OpSend, OpSendWithImm:
		h.wc.Opcode = wcOpSend
		var src []byte
		if w.len > 0 {
			var ok bool
			if src, ok = mem(w.lkey, w.laddr, w.len, AccessLocalRead); !ok {
				fail(WCLocProtErr, false)
				return
			}
		}
		data := append([]byte(nil), src...)
		if !p.deliver(q, data, w.imm, w.op == OpSendWithImm, false, 0) {
			if p.state == QPStateErr {
				fail(WCRemInvReqErr, false)
				return
			}
			p.waiting = append(p.waiting, inSend{from: q, data: data, imm: w.imm, isImm: w.op == OpSendWithImm})
		}
	case OpRDMARead:
		h.wc.Opcode = wcOpRDMARead
		h.wc.ByteLen = w.len
		if w.len > 0 {
			dst, ok := mem(w.lkey, w.laddr, w.len, AccessLocalWrite)
			if !ok {
				fail(WCLocProtErr, false)
				return
			}
			src, ok := mem(w.rkey, w.raddr, w.len, AccessRemoteRead)
			if !ok {
				fail(WCRemAccessErr, true)
				return
			}
			copy(dst, src)
		}
	case OpAtomicCmpAndSwp, OpAtomicFetchAdd:
		h.wc.Opcode = wcOpCompSwap
		if w.op == OpAtomicFetchAdd {
			h.wc.Opcode = wcOpFetchAdd
		}
		h.wc.ByteLen = 8
		dst, ok := mem(w.lkey, w.laddr, 8, AccessLocalWrite)
		if !ok {
			fail(WCLocProtErr, false)
			return
		}
		if w.raddr%8 != 0 {
			fail(WCRemInvReqErr, true)
			return
		}
		rm, ok := mem(w.rkey, w.raddr, 8, AccessRemoteAtomic)
		if !ok {
			fail(WCRemAccessErr, true)
			return
		}
		word := (*uint64)(unsafe.Pointer(unsafe.SliceData(rm)))
		var old uint64
		if w.op == OpAtomicFetchAdd {
			old = atomic.AddUint64(word, w.compareAdd) - w.compareAdd
		} else {
			old = atomic.LoadUint64(word)
			atomic.CompareAndSwapUint64(word, w.compareAdd, w.swap)
		}
		binary.NativeEndian.PutUint64(dst, old)
	default:
		fail(WCRemInvReqErr, false)
		return
	}
	q.held = append(q.held, h)
}

// deliver consumes a receive of q for an incoming send (data) or write
// with immediate (fab held); it reports false when none is posted.
func (q *QP) deliver(from *QP, data []byte, imm uint32, isImm, writeImm bool, writeLen uint32) bool {
	var r recvWR
	if q.srq != nil {
		if len(q.srq.recvs) == 0 {
			return false
		}
		r = q.srq.recvs[0]
		q.srq.recvs = q.srq.recvs[1:]
	} else {
		if len(q.recvs) == 0 {
			return false
		}
		r = q.recvs[0]
		q.recvs = q.recvs[1:]
	}
	wc := WC{WRID: r.wrID, Opcode: wcOpRecv, QPNum: q.num, SrcQP: from.num, ByteLen: uint32(len(data))}
	if writeImm {
		// The receive of a write with immediate data reports the
		// write's length, as rxe does (the conformance table).
		wc.Opcode, wc.ByteLen = wcOpRecvRDMAImm, writeLen
	}
	if isImm {
		wc.WCFlags |= WCWithImm
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], imm)
		wc.ImmData = binary.NativeEndian.Uint32(b[:])
	}
	if len(data) > 0 {
		if uint32(len(data)) > r.len {
			wc.Status = WCLocLenErr
			q.recvCQ.push(wc)
			q.toError()
			return true
		}
		dst, ok := mem(r.lkey, r.laddr, uint32(len(data)), AccessLocalWrite)
		if !ok {
			wc.Status = WCLocProtErr
			q.recvCQ.push(wc)
			q.toError()
			return true
		}
		copy(dst, data)
	}
	q.recvCQ.push(wc)
	return true
}

// drainWaiting matches sends waiting at q with newly posted receives (fab
// held).
func (q *QP) drainWaiting() {
	for len(q.waiting) > 0 {
		s := q.waiting[0]
		if !q.deliver(s.from, s.data, s.imm, s.isImm, s.writeImm, s.writeLen) {
			return
		}
		q.waiting = q.waiting[1:]
	}
}

// PostSend posts one work request, then reaps.
func (q *QP) PostSend(wrID uint64, op SendOp, flags uint32, laddr uint64, length, lkey uint32,
	raddr uint64, rkey, imm uint32, r Reap) (syscall.Errno, int) {
	if e := injectHit(sitePostSend); e != 0 {
		return e, q.reapLocked(r)
	}
	fab.Lock()
	defer fab.Unlock()
	errno, _ := q.post([]wr{{wrID: wrID, op: op, flags: flags, laddr: laddr, len: length, lkey: lkey, raddr: raddr, rkey: rkey, imm: imm}})
	return errno, reap(r)
}

func (q *QP) reapLocked(r Reap) int {
	fab.Lock()
	defer fab.Unlock()
	return reap(r)
}

// PostWriteRead posts an RDMA write and an 8-byte RDMA read as one chain,
// then reaps.
func (q *QP) PostWriteRead(wrID1 uint64, flags1 uint32, laddr uint64, length, lkey uint32, raddr uint64, rkey uint32,
	wrID2 uint64, flags2 uint32, faddr uint64, flkey uint32, fraddr uint64, r Reap) (errno syscall.Errno, posted, reaped int) {
	if e := injectHit(sitePostSendWriteRead); e != 0 {
		return e, 0, q.reapLocked(r)
	}
	fab.Lock()
	defer fab.Unlock()
	errno, posted = q.post([]wr{
		{wrID: wrID1, op: OpRDMAWrite, flags: flags1, laddr: laddr, len: length, lkey: lkey, raddr: raddr, rkey: rkey},
		{wrID: wrID2, op: OpRDMARead, flags: flags2, laddr: faddr, len: 8, lkey: flkey, raddr: fraddr, rkey: rkey},
	})
	return errno, posted, reap(r)
}

// PostBatch posts the writes and reads of wrs as one chain, then reaps.
func (q *QP) PostBatch(wrs []BatchWR, r Reap) (errno syscall.Errno, posted, reaped int) {
	if len(wrs) == 0 || len(wrs) > MaxBatch {
		return syscall.EINVAL, 0, 0
	}
	if e := injectHit(sitePostSendBatch); e != 0 {
		return e, 0, q.reapLocked(r)
	}
	fab.Lock()
	defer fab.Unlock()
	ws := make([]wr, len(wrs))
	for i, b := range wrs {
		ws[i] = wr{wrID: b.WRID, op: b.Op, flags: b.Flags, laddr: b.LAddr, len: b.Len, lkey: b.LKey, raddr: b.RAddr, rkey: b.RKey}
	}
	errno, posted = q.post(ws)
	return errno, posted, reap(r)
}

// PostInline8 posts an inline 8-byte RDMA write of value, then reaps.
func (q *QP) PostInline8(wrID uint64, flags uint32, raddr uint64, rkey uint32, value uint64, r Reap) (syscall.Errno, int) {
	if e := injectHit(sitePostSendInline8); e != 0 {
		return e, q.reapLocked(r)
	}
	fab.Lock()
	defer fab.Unlock()
	b := make([]byte, 8)
	binary.NativeEndian.PutUint64(b, value)
	errno, _ := q.post([]wr{{wrID: wrID, op: OpRDMAWrite, flags: flags, len: 8, raddr: raddr, rkey: rkey, inline: b, isInline: true}})
	return errno, reap(r)
}

// PostAtomicWrite returns EOPNOTSUPP: the fake has no native atomic write.
func (q *QP) PostAtomicWrite(uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int) {
	return syscall.EOPNOTSUPP, 0
}

// PostAtomic posts a remote compare-and-swap or fetch-and-add, then reaps.
func (q *QP) PostAtomic(wrID uint64, op SendOp, flags uint32, laddr uint64, lkey uint32, raddr uint64, rkey uint32,
	compareAdd, swap uint64, r Reap) (syscall.Errno, int) {
	if e := injectHit(sitePostSendAtomic); e != 0 {
		return e, q.reapLocked(r)
	}
	fab.Lock()
	defer fab.Unlock()
	errno, _ := q.post([]wr{{wrID: wrID, op: op, flags: flags, laddr: laddr, len: 8, lkey: lkey, raddr: raddr, rkey: rkey, compareAdd: compareAdd, swap: swap}})
	return errno, reap(r)
}

// PostRecv posts a receive.
func (q *QP) PostRecv(wrID uint64, laddr uint64, length, lkey uint32) syscall.Errno {
	if e := injectHit(sitePostRecv); e != 0 {
		return e
	}
	fab.Lock()
	defer fab.Unlock()
	if q.dead || q.srq != nil {
		return syscall.EINVAL
	}
	if q.state == QPStateErr {
		q.recvCQ.push(WC{WRID: wrID, Status: WCWRFlushErr, Opcode: wcOpRecv, QPNum: q.num})
		return 0
	}
	if len(q.recvs) >= q.maxRecv {
		return syscall.ENOMEM
	}
	q.recvs = append(q.recvs, recvWR{wrID: wrID, laddr: laddr, len: length, lkey: lkey})
	q.drainWaiting()
	return 0
}

// SRQ is a shared receive queue.
type SRQ struct {
	key   uintptr
	max   int
	recvs []recvWR
	qps   []*QP
	dead  bool
}

// CreateSRQ creates a shared receive queue of maxWR work requests.
func (pd *PD) CreateSRQ(maxWR int) (*SRQ, int, error) {
	if e := injectHit(siteCreateSRQ); e != 0 {
		return nil, 0, callError("ibv_create_srq", e)
	}
	if maxWR < 1 || maxWR > FakeDeviceAttr.MaxSRQWR {
		return nil, 0, callError("ibv_create_srq", syscall.EINVAL)
	}
	objInc(ObjSRQ)
	return &SRQ{key: newKey(), max: maxWR}, maxWR, nil
}

// PostRecv posts a receive to the SRQ.
func (s *SRQ) PostRecv(wrID uint64, laddr uint64, length, lkey uint32) syscall.Errno {
	if e := injectHit(sitePostSRQRecv); e != 0 {
		return e
	}
	fab.Lock()
	defer fab.Unlock()
	if s.dead {
		return syscall.EINVAL
	}
	if len(s.recvs) >= s.max {
		return syscall.ENOMEM
	}
	s.recvs = append(s.recvs, recvWR{wrID: wrID, laddr: laddr, len: length, lkey: lkey})
	for _, q := range s.qps {
		q.drainWaiting()
	}
	return 0
}

// Destroy destroys the SRQ; a no-op on nil or destroyed. It fails with
// EBUSY while a QP uses it.
func (s *SRQ) Destroy() error {
	if s == nil {
		return nil
	}
	fab.Lock()
	defer fab.Unlock()
	if s.dead {
		return nil
	}
	if e := injectHit(siteDestroySRQ); e != 0 {
		return callError("ibv_destroy_srq", e)
	}
	if len(s.qps) > 0 {
		return callError("ibv_destroy_srq", syscall.EBUSY)
	}
	s.dead = true
	objDec(ObjSRQ)
	return nil
}

// Key returns the QP's key.
func (q *QP) Key() uintptr {
	if q == nil {
		return 0
	}
	return q.key
}

// Key returns the SRQ's key.
func (s *SRQ) Key() uintptr {
	if s == nil {
		return 0
	}
	return s.key
}

// MW is a memory window.
type MW struct {
	RKey  uint32
	bound uint32 // the key it is bound with, 0 when unbound
	dead  bool
}

// AllocMW2 allocates a type 2 memory window.
func (pd *PD) AllocMW2() (*MW, error) {
	if e := injectHit(siteAllocMW); e != 0 {
		return nil, callError("ibv_alloc_mw", e)
	}
	fab.Lock()
	defer fab.Unlock()
	objInc(ObjMW)
	return &MW{RKey: newMemKey()}, nil
}

// Dealloc deallocates the window (its binding ends); a no-op on nil or
// deallocated.
func (w *MW) Dealloc() error {
	if w == nil {
		return nil
	}
	fab.Lock()
	defer fab.Unlock()
	if w.dead {
		return nil
	}
	if e := injectHit(siteDeallocMW); e != 0 {
		return callError("ibv_dealloc_mw", e)
	}
	if w.bound != 0 {
		delete(keys, w.bound)
	}
	w.dead = true
	objDec(ObjMW)
	return nil
}

// bindMW binds (length > 0) or invalidates (length 0) a window (fab
// held) and returns the completion status.
func bindMW(w *wr) uint32 {
	mw := w.bind
	if mw == nil || mw.dead || w.bindRKey&0xffffff00 != mw.RKey&0xffffff00 {
		return WCMWBindErr
	}
	if mw.bound != 0 {
		delete(keys, mw.bound)
		mw.bound = 0
	}
	if w.bindLen == 0 {
		return WCSuccess
	}
	m := w.bindMR
	if m == nil || m.dead {
		return WCMWBindErr
	}
	k := keys[m.LKey]
	if k == nil || k.access&AccessMWBind == 0 || w.bindAddr < m.Addr || w.bindAddr+w.bindLen > m.Addr+m.Length {
		return WCMWBindErr
	}
	keys[w.bindRKey] = &memKey{base: unsafe.Add(k.base, w.bindAddr-m.Addr), addr: w.bindAddr, length: w.bindLen, access: w.bindAccess}
	mw.bound = w.bindRKey
	return WCSuccess
}

// PostBindMW posts the binding of w to length bytes of m at addr, with
// rkey and access (length 0 unbinds), then reaps.
func (q *QP) PostBindMW(wrID uint64, flags uint32, w *MW, rkey uint32, m *MR, addr, length uint64, access int, r Reap) (syscall.Errno, int) {
	if e := injectHit(sitePostSendBindMW); e != 0 {
		return e, q.reapLocked(r)
	}
	fab.Lock()
	defer fab.Unlock()
	errno, _ := q.post([]wr{{wrID: wrID, flags: flags, isBind: true, bind: w, bindRKey: rkey, bindMR: m, bindAddr: addr, bindLen: length, bindAccess: access}})
	return errno, reap(r)
}
