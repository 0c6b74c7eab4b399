//go:build rpma_fake && linux

package ibv

// The fake verbs layer: the build tag rpma_fake replaces the cgo files of
// this package by these pure-Go ones, with the same exported API, so that
// internal/core runs on a host without RDMA (and under -race). They model
// one device ("fake0", reached through any IP address) whose QPs, paired
// by the fake rdma_cm, move bytes between registered memory in the same
// process. See doc/architecture.md, "The fake verbs layer".
//
// Every fake object is guarded by one mutex, fab: the fake is for logic
// tests, not for speed. Its fds (completion channels, rdma_cm event
// channels, the device's async fd) are real eventfds, readable while the
// object has something to read, so core's waits in the runtime poller and
// in epoll work as with the provider.

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fab guards every fake object.
var fab sync.Mutex

// nextKey numbers the fake objects (their Key, CQRef, QP numbers).
var nextKey atomic.Uint64

func newKey() uintptr { return uintptr(nextKey.Add(1)) + 0x1000 }

// FakeBuild reports whether this is the fake build (the tag rpma_fake).
const FakeBuild = true

// notifier is an eventfd that is readable while its owner has something to
// read (fab held for set).
type notifier struct {
	fd    int
	ready bool
}

func newNotifier(call string) (*notifier, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, callError(call, errnoOf(err))
	}
	return &notifier{fd: fd}, nil
}

// set makes the fd readable (or not). Each arrival writes, so that an
// edge-triggered poller sees every one.
func (n *notifier) set(readable bool) {
	if n == nil || n.fd < 0 {
		return
	}
	var b [8]byte
	if readable {
		b[0] = 1
		unix.Write(n.fd, b[:])
		n.ready = true
		return
	}
	if n.ready {
		unix.Read(n.fd, b[:])
		n.ready = false
	}
}

func (n *notifier) close() {
	if n != nil && n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
	}
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return 0
}

// Crossing does nothing: the fake has no C to cross into.
func Crossing() {}

// fakeDev is the one fake device.
type fakeDev struct {
	key   uintptr
	async *notifier
	evs   []AsyncEvent
}

var theDev = &fakeDev{key: newKey()}

// dev returns the device, its async fd made on first use (fab held).
func dev() *fakeDev {
	if theDev.async == nil {
		n, err := newNotifier("ibv_open_device")
		if err != nil {
			panic("ibv fake: eventfd: " + err.Error())
		}
		theDev.async = n
	}
	return theDev
}

// FakeDeviceName is the name of the fake device.
const FakeDeviceName = "fake0"

// DeviceNames returns the fake device's name.
func DeviceNames() ([]string, error) {
	if e := injectHit(siteGetDeviceList); e != 0 {
		return nil, callError("ibv_get_device_list", e)
	}
	return []string{FakeDeviceName}, nil
}

// Context is an open device.
type Context struct {
	d     *fakeDev
	owned bool
}

// OpenDevice opens the fake device by name.
func OpenDevice(name string) (*Context, error) {
	if e := injectHit(siteGetDeviceListOpen); e != 0 {
		return nil, callError("ibv_get_device_list", e)
	}
	if name != FakeDeviceName {
		return nil, &os.SyscallError{Syscall: "ibv_open_device", Err: syscall.ENODEV}
	}
	if e := injectHit(siteOpenDevice); e != 0 {
		return nil, callError("ibv_open_device", e)
	}
	fab.Lock()
	d := dev()
	fab.Unlock()
	objInc(ObjContext)
	return &Context{d: d, owned: true}, nil
}

// borrowed returns a context of the device that is not counted (an
// rdma_cm id's).
func borrowed() *Context {
	fab.Lock()
	defer fab.Unlock()
	return &Context{d: dev()}
}

// Name returns the device's name.
func (c *Context) Name() string { return FakeDeviceName }

// FakeDeviceAttr is what QueryDevice reports (rxe's limits, no native
// flush or atomic write, memory windows of type 2B). A test may change it
// before it creates a peer.
var FakeDeviceAttr = DeviceAttr{
	Name: FakeDeviceName, FWVer: "0.0.0", VendorID: 0xffffff, PhysPortCnt: 1,
	MaxMRSize: 1 << 40, MaxQP: 1 << 16, MaxQPWR: 1 << 20, MaxSGE: 32, MaxCQ: 1 << 16,
	MaxCQE: 32767, MaxMR: 1 << 18, MaxSRQ: 1 << 16, MaxSRQWR: 1 << 20,
	MaxQPRdAtom: 128, MaxQPInitRdAtom: 128, AtomicCap: AtomicHCA,
	DeviceCapFlags: DeviceMemWindow | DeviceMemWindowType2B,
}

// QueryDevice returns FakeDeviceAttr.
func (c *Context) QueryDevice() (DeviceAttr, error) {
	if e := injectHit(siteQueryDeviceEx); e != 0 {
		return DeviceAttr{}, callError("ibv_query_device_ex", e)
	}
	fab.Lock()
	defer fab.Unlock()
	return FakeDeviceAttr, nil
}

// QueryPort reports an active Ethernet port.
func (c *Context) QueryPort(int) (PortAttr, error) {
	if e := injectHit(siteQueryPort); e != 0 {
		return PortAttr{}, callError("ibv_query_port", e)
	}
	return PortAttr{State: PortActive, ActiveMTU: 1024, LinkLayer: 2}, nil
}

// Close closes an opened context; a borrowed one is only dropped.
func (c *Context) Close() error {
	if c == nil || c.d == nil {
		return nil
	}
	if c.owned {
		if e := injectHit(siteCloseDevice); e != 0 {
			return callError("ibv_close_device", e)
		}
		objDec(ObjContext)
	}
	c.d = nil
	return nil
}

// Same reports whether c and o are the same device.
func (c *Context) Same(o *Context) bool { return c != nil && o != nil && c.d != nil && c.d == o.d }

// IsIWARP reports false: the fake is RoCE-like.
func (c *Context) IsIWARP() bool { return false }

// AsyncFD returns the device's async event fd.
func (c *Context) AsyncFD() int {
	fab.Lock()
	defer fab.Unlock()
	return dev().async.fd
}

// Key returns the device's key.
func (c *Context) Key() uintptr {
	if c == nil || c.d == nil {
		return 0
	}
	return c.d.key
}

// GetAsyncEvent returns the next async event, or an error matching
// EAGAIN when there is none.
func (c *Context) GetAsyncEvent() (AsyncEvent, error) {
	if e := injectHit(siteGetAsyncEvent); e != 0 {
		return AsyncEvent{}, callError("ibv_get_async_event", e)
	}
	fab.Lock()
	defer fab.Unlock()
	d := dev()
	if len(d.evs) == 0 {
		return AsyncEvent{}, errAsyncEventAgain
	}
	ev := d.evs[0]
	d.evs = d.evs[1:]
	d.async.set(len(d.evs) > 0)
	return ev, nil
}

// asyncEvent queues an async event of the device (fab held).
func asyncEvent(t AsyncEventType, obj uintptr) {
	d := dev()
	d.evs = append(d.evs, AsyncEvent{Type: t, Object: obj})
	d.async.set(true)
}

// FakeAsyncEvent queues an async event about obj (a Key, 0 for the
// device), as the provider would report one.
func FakeAsyncEvent(t AsyncEventType, obj uintptr) {
	fab.Lock()
	defer fab.Unlock()
	asyncEvent(t, obj)
}

// PD is a protection domain.
type PD struct {
	ctx  *Context
	dead bool
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	if e := injectHit(siteAllocPD); e != 0 {
		return nil, &os.SyscallError{Syscall: "ibv_alloc_pd", Err: e}
	}
	objInc(ObjPD)
	return &PD{ctx: &Context{d: c.d}}, nil
}

// Context returns the device the PD belongs to.
func (pd *PD) Context() *Context { return &Context{d: pd.ctx.d} }

// Dealloc deallocates the PD; a no-op on nil or a deallocated PD.
func (pd *PD) Dealloc() error {
	if pd == nil || pd.dead {
		return nil
	}
	if e := injectHit(siteDeallocPD); e != 0 {
		return callError("ibv_dealloc_pd", e)
	}
	pd.dead = true
	objDec(ObjPD)
	return nil
}

// CompChannel is a completion channel; its fd is an eventfd readable while
// an event is pending.
type CompChannel struct {
	n    *notifier
	evs  []*CQ
	dead bool
}

// CreateCompChannel creates a completion channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	if e := injectHit(siteCreateCompChannel); e != 0 {
		return nil, callError("ibv_create_comp_channel", e)
	}
	n, err := newNotifier("ibv_create_comp_channel")
	if err != nil {
		return nil, err
	}
	objInc(ObjCompChannel)
	return &CompChannel{n: n}, nil
}

// FD returns the channel's fd, -1 for nil or destroyed.
func (ch *CompChannel) FD() int {
	if ch == nil {
		return -1
	}
	fab.Lock()
	defer fab.Unlock()
	if ch.dead {
		return -1
	}
	return ch.n.fd
}

// GetCQEvent reads the next completion event, acknowledges ack events of
// its CQ (this one included; 0: none) and, with rearm, re-arms the CQ;
// with none pending it returns an error matching EAGAIN.
func (ch *CompChannel) GetCQEvent(rearm bool, ack int) (CQRef, error) {
	if e := injectHit(siteGetCQEvent); e != 0 {
		if e == syscall.EAGAIN {
			return CQRef{}, errCQEventAgain
		}
		return CQRef{}, callError("ibv_get_cq_event", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if len(ch.evs) == 0 {
		return CQRef{}, errCQEventAgain
	}
	q := ch.evs[0]
	ch.evs = ch.evs[1:]
	ch.n.set(len(ch.evs) > 0)
	ref := CQRef{h: q.key}
	q.unacked++
	q.ackLocked(ack)
	if !rearm {
		return ref, nil
	}
	if e := injectHit(siteReqNotifyCQRearm); e != 0 {
		return ref, callError("ibv_req_notify_cq", e)
	}
	q.arm()
	return ref, nil
}

// GetCQEventRearm is GetCQEvent(true, 1).
func (ch *CompChannel) GetCQEventRearm() (CQRef, error) { return ch.GetCQEvent(true, 1) }

// WaitCQEvent blocks in epoll_wait on epfd until one of its fds is ready
// and, when the channel is (and cancelFD is not) and read is set, reads
// its event as GetCQEvent(rearm, ack) does.
func (ch *CompChannel) WaitCQEvent(epfd, cancelFD int, read, rearm bool, ack int) (WaitReady, CQRef, bool, error) {
	var evs [4]unix.EpollEvent
	n, err := unix.EpollWait(epfd, evs[:], -1)
	for err == unix.EINTR {
		n, err = unix.EpollWait(epfd, evs[:], -1)
	}
	if err != nil {
		return 0, CQRef{}, false, callError("epoll_wait", errnoOf(err))
	}
	chFD := ch.FD()
	var ready WaitReady
	for _, ev := range evs[:n] {
		switch int(ev.Fd) {
		case chFD:
			ready |= ReadyChannel
		case cancelFD:
			ready |= ReadyCancel
		default:
			ready |= ReadyOther
		}
	}
	if !read || ready&ReadyChannel == 0 || ready&ReadyCancel != 0 {
		return ready, CQRef{}, false, nil
	}
	ref, err := ch.GetCQEvent(rearm, ack)
	if err == errCQEventAgain {
		return ready, CQRef{}, false, nil
	}
	return ready, ref, true, err
}

// CQRef names the CQ an event came from.
type CQRef struct{ h uintptr }

// Is reports whether r names q.
func (q *CQ) Is(r CQRef) bool { return q != nil && !q.dead && q.key == r.h }

// Destroy destroys the channel; a no-op on nil or destroyed.
func (ch *CompChannel) Destroy() error {
	if ch == nil {
		return nil
	}
	fab.Lock()
	defer fab.Unlock()
	if ch.dead {
		return nil
	}
	if e := injectHit(siteDestroyCompChannel); e != 0 {
		return callError("ibv_destroy_comp_channel", e)
	}
	ch.dead = true
	ch.n.close()
	objDec(ObjCompChannel)
	return nil
}

// CQ is a completion queue.
type CQ struct {
	key      uintptr
	ch       *CompChannel
	cqe      int
	wcs      []WC
	armed    bool
	overflow bool
	dead     bool
	// unacked counts the events read and not acknowledged: rdma-core's
	// ibv_destroy_cq waits for ever for them, and the fake's Destroy
	// refuses instead (EBUSY), so that a missed acknowledgement fails a
	// test rather than hanging it.
	unacked int
	// relQP's held completions are delivered at the relLeft-th poll of
	// q from now (QP.FakeReleaseAfterPolls).
	relQP   *QP
	relLeft int
}

// ackLocked acknowledges n of q's events (fab held).
func (q *CQ) ackLocked(n int) {
	if n > 0 {
		q.unacked = max(q.unacked-n, 0)
	}
}

// AckEvents acknowledges n events of q read without acknowledgement.
func (q *CQ) AckEvents(n int) {
	fab.Lock()
	defer fab.Unlock()
	q.ackLocked(n)
}

// Unacked reports how many events of q were read and not acknowledged,
// for tests.
func (q *CQ) Unacked() int {
	fab.Lock()
	defer fab.Unlock()
	return q.unacked
}

// Armed reports whether q is armed (an event comes at its next
// completion), for tests.
func (q *CQ) Armed() bool {
	fab.Lock()
	defer fab.Unlock()
	return q.armed
}

// cqRound is rxe's size of a queue of n entries: one slot is kept free in
// a ring of a power of two.
func cqRound(n int) int {
	s := 1
	for s < n+1 {
		s <<= 1
	}
	return s - 1
}

var cqs = map[uintptr]*CQ{} // live CQs by key (fab)

// CreateCQ creates a completion queue of at least cqe entries.
func (c *Context) CreateCQ(cqe int, ch *CompChannel, compVector int) (*CQ, error) {
	if e := injectHit(siteCreateCQ); e != 0 {
		return nil, callError("ibv_create_cq", e)
	}
	if cqe < 1 || cqe > FakeDeviceAttr.MaxCQE {
		return nil, callError("ibv_create_cq", syscall.EINVAL)
	}
	q := &CQ{key: newKey(), ch: ch, cqe: cqRound(cqe)}
	fab.Lock()
	cqs[q.key] = q
	fab.Unlock()
	objInc(ObjCQ)
	return q, nil
}

// Same reports whether q and o are the same CQ.
func (q *CQ) Same(o *CQ) bool { return q != nil && o != nil && !q.dead && q == o }

// CQE returns the number of entries.
func (q *CQ) CQE() int {
	fab.Lock()
	defer fab.Unlock()
	return q.cqe
}

// arm arms the CQ; an event comes at its next completion (fab held).
func (q *CQ) arm() {
	q.armed = true
	if len(q.wcs) > 0 {
		// ibv_req_notify_cq on a CQ that holds completions: rxe signals
		// at the next completion only, as here.
		return
	}
}

// ReqNotify arms the CQ.
func (q *CQ) ReqNotify(solicitedOnly bool) error {
	if e := injectHit(siteReqNotifyCQ); e != 0 {
		return callError("ibv_req_notify_cq", e)
	}
	fab.Lock()
	defer fab.Unlock()
	q.arm()
	return nil
}

// push adds a completion (fab held): an event when armed; a full CQ loses
// it and reports IBV_EVENT_CQ_ERR, as rxe does.
func (q *CQ) push(wc WC) {
	if q == nil || q.dead {
		return
	}
	if len(q.wcs) >= q.cqe {
		if !q.overflow {
			q.overflow = true
			asyncEvent(EventCQErr, q.key)
		}
		return
	}
	q.wcs = append(q.wcs, wc)
	if q.armed && q.ch != nil && !q.ch.dead {
		q.armed = false
		q.ch.evs = append(q.ch.evs, q)
		q.ch.n.set(true)
	}
}

// poll moves up to n completions into out (fab held).
func (q *CQ) poll(out []WC) int {
	n := copy(out, q.wcs)
	q.wcs = q.wcs[:copy(q.wcs, q.wcs[n:])]
	return n
}

// ArmPoll arms q and then polls up to n completions into b from its
// element from on, as one call. Completions due at this poll
// (FakeReleaseAfterPolls) come just before the arm: they raise no event.
func (q *CQ) ArmPoll(b *WCBuf, from, n int) (int, error) {
	if e := injectHit(siteReqNotifyCQ); e != 0 {
		return 0, callError("ibv_req_notify_cq", e)
	}
	if n <= 0 {
		return 0, nil
	}
	fab.Lock()
	defer fab.Unlock()
	q.countPoll()
	q.arm()
	if e := injectHit(sitePollCQ); e != 0 {
		return 0, callError("ibv_poll_cq", 0)
	}
	return q.poll(b.wcs[from : from+n]), nil
}

// countPoll counts a poll for FakeReleaseAfterPolls (fab held).
func (q *CQ) countPoll() {
	if qp := q.relQP; qp != nil {
		if q.relLeft--; q.relLeft <= 0 {
			q.relQP = nil
			qp.release(-1)
		}
	}
}

// Poll polls up to n completions into b from its element from on.
func (q *CQ) Poll(b *WCBuf, from, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	if e := injectHit(sitePollCQ); e != 0 {
		return 0, callError("ibv_poll_cq", 0)
	}
	fab.Lock()
	defer fab.Unlock()
	q.countPoll()
	return q.poll(b.wcs[from : from+n]), nil
}

// ReapInto says that a post reaps up to room completions of q into b from
// its element from on. The fake encodes the CQ's key and from in cq, and
// the buffer's address (its key in wcbufs: no integer becomes a pointer
// again, which checkptr would refuse) in out.
func (q *CQ) ReapInto(b *WCBuf, from, room int) Reap {
	return Reap{cq: q.key | uintptr(from)<<32, out: b.addr(0), room: room}
}

var wcbufs = map[uintptr]*WCBuf{} // live buffers by address (fab)

// reap is a post's poll as r says (fab held): how many it got, 0 when it
// failed (a post's reap leaves a failure to GetWC, as rpma_post_result
// does).
func reap(r Reap) int { return max(pollReap(r), 0) }

// pollReap polls as r says (fab held) and returns how many, or -1 when an
// injected POLL_CQ failure made the poll fail (rpma_reap's negative).
func pollReap(r Reap) int {
	if r.room <= 0 {
		return 0
	}
	q := cqs[r.cq&0xffffffff]
	b := wcbufs[r.out]
	if q == nil || b == nil {
		return 0
	}
	if injectHit(sitePollCQ) != 0 {
		return -1
	}
	from := int(r.cq >> 32)
	return q.poll(b.wcs[from : from+r.room])
}

// NewWCBuf allocates n work completions.
func NewWCBuf(n int) (*WCBuf, error) {
	if e := injectHit(siteCallocWC); e != 0 {
		return nil, callError("calloc", syscall.ENOMEM)
	}
	if n < 1 {
		n = 1
	}
	wcs := make([]WC, n)
	b := &WCBuf{p: unsafe.Pointer(&wcs[0]), wcs: wcs}
	fab.Lock()
	wcbufs[uintptr(b.p)] = b
	fab.Unlock()
	objInc(ObjWCBuf)
	return b, nil
}

// Free drops the buffer; a no-op on nil and on a second call.
func (b *WCBuf) Free() {
	if b == nil || b.p == nil {
		return
	}
	fab.Lock()
	delete(wcbufs, uintptr(b.p))
	fab.Unlock()
	b.p, b.wcs = nil, nil
	objDec(ObjWCBuf)
}

// Resize resizes the CQ to at least n entries; it fails with EINVAL when
// the CQ holds more than that.
func (q *CQ) Resize(n int) error {
	if e := injectHit(siteResizeCQ); e != 0 {
		return callError("ibv_resize_cq", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if n < 1 || n > FakeDeviceAttr.MaxCQE || len(q.wcs) > cqRound(n) {
		return callError("ibv_resize_cq", syscall.EINVAL)
	}
	q.cqe = cqRound(n)
	return nil
}

// Destroy destroys the CQ; a no-op on nil or destroyed.
func (q *CQ) Destroy() error {
	if q == nil {
		return nil
	}
	fab.Lock()
	defer fab.Unlock()
	if q.dead {
		return nil
	}
	if e := injectHit(siteDestroyCQ); e != 0 {
		return callError("ibv_destroy_cq", e)
	}
	if q.unacked > 0 {
		// rdma-core waits here for ever for the acknowledgements.
		return callError("ibv_destroy_cq", syscall.EBUSY)
	}
	q.dead = true
	delete(cqs, q.key)
	if q.ch != nil {
		k := 0
		for _, x := range q.ch.evs {
			if x != q {
				q.ch.evs[k] = x
				k++
			}
		}
		q.ch.evs = q.ch.evs[:k]
		q.ch.n.set(k > 0)
	}
	objDec(ObjCQ)
	return nil
}

// Key returns the CQ's key.
func (q *CQ) Key() uintptr {
	if q == nil {
		return 0
	}
	return q.key
}

// Poll polls the first n CQs of s, as rpma_poll_many does: Got[i] is
// how many completions Reqs[i]'s poll got, or -1 when an injected
// POLL_CQ failure made it fail.
func (s *Sweep) Poll(n int) {
	fab.Lock()
	defer fab.Unlock()
	for i := range min(n, len(s.Reqs)) {
		s.Got[i] = int32(pollReap(s.Reqs[i]))
	}
}
