//go:build rpma_fake && linux

package ibv

import (
	"net/netip"
	"strconv"
	"syscall"
)

// The fake rdma_cm: every IP address is the fake device's; a listener
// takes the connection requests to its address and port, and an accepted
// request pairs the two ids' QPs.

// Reject reasons the fake reports (enum ib_cm_rej_reason).
const (
	fakeRejNoListener = 8  // IB_CM_REJ_INVALID_SERVICE_ID
	fakeRejConsumer   = 28 // IB_CM_REJ_CONSUMER_DEFINED
)

// Private data limits of rdma_cm over IB CM (RoCE).
const (
	maxConnectPData = 56
	maxAcceptPData  = 196
	maxRejectPData  = 148
)

// EventChannel is an rdma_cm event channel; its fd is readable while an
// event is pending.
type EventChannel struct {
	n    *notifier
	evs  []CMEvent
	dead bool
}

// CreateEventChannel creates an event channel.
func CreateEventChannel() (*EventChannel, error) {
	if e := injectHit(siteCreateEventChannel); e != 0 {
		return nil, callError("rdma_create_event_channel", e)
	}
	n, err := newNotifier("rdma_create_event_channel")
	if err != nil {
		return nil, err
	}
	objInc(ObjEventChannel)
	return &EventChannel{n: n}, nil
}

// FD returns the channel's fd, -1 for nil or destroyed.
func (ch *EventChannel) FD() int {
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

// push queues an event (fab held).
func (ch *EventChannel) push(ev CMEvent) {
	if ch == nil || ch.dead {
		return
	}
	ch.evs = append(ch.evs, ev)
	ch.n.set(true)
}

// GetEvent returns the next event, or an error matching EAGAIN when none
// is pending.
func (ch *EventChannel) GetEvent() (CMEvent, error) {
	if e := injectHit(siteGetCMEvent); e != 0 {
		if e == syscall.EAGAIN {
			return CMEvent{}, errCMEventAgain
		}
		return CMEvent{}, callError("rdma_get_cm_event", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if ch.dead {
		return CMEvent{}, callError("rdma_get_cm_event", syscall.EBADF)
	}
	if len(ch.evs) == 0 {
		return CMEvent{}, errCMEventAgain
	}
	ev := ch.evs[0]
	ch.evs = ch.evs[1:]
	ch.n.set(len(ch.evs) > 0)
	if ev.Type == EventConnectRequest {
		objInc(ObjCMID)
	}
	if e := injectHit(siteAckCMEvent); e != 0 {
		return ev, callError("rdma_ack_cm_event", e)
	}
	return ev, nil
}

// Destroy destroys the channel.
func (ch *EventChannel) Destroy() {
	if ch == nil {
		return
	}
	fab.Lock()
	defer fab.Unlock()
	if ch.dead {
		return
	}
	ch.dead = true
	ch.n.close()
	objDec(ObjEventChannel)
}

// CMID is an rdma_cm identifier.
type CMID struct {
	ch        *EventChannel
	local     SockAddr
	peerAddr  SockAddr
	verbs     bool
	listening bool
	qp        *QP
	other     *CMID // the other side of a connection (request or established)
	listener  *CMID // a request's listening id
	connected bool
	sentDREQ  bool
	gotDREQ   bool
	rejected  bool
	accepted  bool
	dead      bool
}

var (
	listeners = map[SockAddr]*CMID{} // (fab)
	nextPort  = 20000                // ephemeral ports (fab)
)

// CreateID creates an id reporting to ch (nil: a synchronous id).
func CreateID(ch *EventChannel) (*CMID, error) {
	if e := injectHit(siteCreateID); e != 0 {
		return nil, callError("rdma_create_id", e)
	}
	objInc(ObjCMID)
	return &CMID{ch: ch}, nil
}

// Same reports whether id and o are the same id.
func (id *CMID) Same(o *CMID) bool { return id != nil && o != nil && id == o }

// Verbs returns the id's device once it is bound or resolved, else nil.
func (id *CMID) Verbs() *Context {
	fab.Lock()
	v := id.verbs
	fab.Unlock()
	if !v {
		return nil
	}
	return borrowed()
}

// ephemeral returns a free port (fab held).
func ephemeral() uint16 {
	nextPort++
	if nextPort > 60000 {
		nextPort = 20001
	}
	return uint16(nextPort)
}

// BindAddr binds the id to the address (port 0: an ephemeral one).
func (id *CMID) BindAddr(ai *AddrInfo) error {
	if e := injectHit(siteBindAddr); e != 0 {
		return callError("rdma_bind_addr", e)
	}
	fab.Lock()
	defer fab.Unlock()
	a := ai.a
	if a.Port() == 0 {
		a = netip.AddrPortFrom(a.Addr(), ephemeral())
	} else if listeners[a] != nil {
		return callError("rdma_bind_addr", syscall.EADDRINUSE)
	}
	id.local, id.verbs = a, true
	return nil
}

// ResolveAddr resolves the destination: ADDR_RESOLVED on the channel.
func (id *CMID) ResolveAddr(ai *AddrInfo, timeoutMs int) error {
	if e := injectHit(siteResolveAddr); e != 0 {
		return callError("rdma_resolve_addr", e)
	}
	fab.Lock()
	defer fab.Unlock()
	id.peerAddr = ai.a
	id.local = netip.AddrPortFrom(ai.a.Addr(), ephemeral())
	id.verbs = true
	id.ch.push(CMEvent{Type: EventAddrResolved, ID: id})
	return nil
}

// ResolveRoute resolves the route: ROUTE_RESOLVED on the channel.
func (id *CMID) ResolveRoute(timeoutMs int) error {
	if e := injectHit(siteResolveRoute); e != 0 {
		return callError("rdma_resolve_route", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if !id.verbs {
		return callError("rdma_resolve_route", syscall.EINVAL)
	}
	id.ch.push(CMEvent{Type: EventRouteResolved, ID: id})
	return nil
}

// Listen makes the bound id take the connection requests to its address.
func (id *CMID) Listen(backlog int) error {
	if e := injectHit(siteListen); e != 0 {
		return callError("rdma_listen", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if !id.verbs {
		return callError("rdma_listen", syscall.EINVAL)
	}
	if l := listeners[id.local]; l != nil && l != id {
		return callError("rdma_listen", syscall.EADDRINUSE)
	}
	listeners[id.local] = id
	id.listening = true
	return nil
}

// Connect sends a connection request to the resolved address.
func (id *CMID) Connect(p *ConnParam) error {
	if e := injectHit(siteConnect); e != 0 {
		return callError("rdma_connect", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if len(p.PrivateData) > maxConnectPData || !id.verbs || id.other != nil || id.connected {
		return callError("rdma_connect", syscall.EINVAL)
	}
	l := listeners[id.peerAddr]
	if l == nil {
		l = listeners[netip.AddrPortFrom(netip.IPv4Unspecified(), id.peerAddr.Port())]
	}
	if l == nil || l.dead {
		id.ch.push(CMEvent{Type: EventRejected, Status: fakeRejNoListener, ID: id})
		return nil
	}
	req := &CMID{ch: l.ch, local: netip.AddrPortFrom(id.peerAddr.Addr(), l.local.Port()), peerAddr: id.local,
		verbs: true, other: id, listener: l}
	id.other = req
	l.ch.push(CMEvent{Type: EventConnectRequest, ID: req, ListenID: l, PrivateData: clone(p.PrivateData)})
	return nil
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// Accept accepts a connection request: the two QPs are paired and move to
// RTS; both sides get ESTABLISHED (the active one with p's private data).
func (id *CMID) Accept(p *ConnParam) error {
	if e := injectHit(siteAccept); e != 0 {
		return callError("rdma_accept", e)
	}
	fab.Lock()
	defer fab.Unlock()
	a := id.other
	if len(p.PrivateData) > maxAcceptPData || id.listener == nil || id.accepted || id.rejected || id.qp == nil {
		return callError("rdma_accept", syscall.EINVAL)
	}
	id.accepted = true
	if a == nil || a.dead || a.qp == nil || a.qp.dead {
		// The active side went away: its REJ/DREQ ends the passive one.
		id.ch.push(CMEvent{Type: EventConnectError, Status: -int(syscall.ECONNRESET), ID: id})
		return nil
	}
	id.qp.peer, a.qp.peer = a.qp, id.qp
	id.qp.state, a.qp.state = QPStateRTS, QPStateRTS
	id.connected, a.connected = true, true
	a.ch.push(CMEvent{Type: EventEstablished, ID: a, PrivateData: clone(p.PrivateData)})
	id.ch.push(CMEvent{Type: EventEstablished, ID: id})
	return nil
}

// Reject rejects a connection request: the active side gets REJECTED with
// pdata.
func (id *CMID) Reject(pdata []byte) error {
	if e := injectHit(siteReject); e != 0 {
		return callError("rdma_reject", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if len(pdata) > maxRejectPData || id.listener == nil || id.accepted || id.rejected {
		return callError("rdma_reject", syscall.EINVAL)
	}
	id.rejected = true
	if a := id.other; a != nil && !a.dead {
		a.other = nil
		a.ch.push(CMEvent{Type: EventRejected, Status: fakeRejConsumer, ID: a, PrivateData: clone(pdata)})
	}
	id.other = nil
	return nil
}

// SetAckTimeout accepts any value.
func (id *CMID) SetAckTimeout(uint8) error {
	if e := injectHit(siteSetOption); e != 0 {
		return callError("rdma_set_option", e)
	}
	return nil
}

// Disconnect moves the id's QP to the error state and, the first time on
// either side, the other side gets DISCONNECTED; both get it once.
func (id *CMID) Disconnect() error {
	if e := injectHit(siteDisconnect); e != 0 {
		return callError("rdma_disconnect", e)
	}
	fab.Lock()
	defer fab.Unlock()
	return id.disconnect()
}

// disconnect (fab held).
func (id *CMID) disconnect() error {
	if !id.connected || id.sentDREQ {
		return callError("rdma_disconnect", syscall.EINVAL)
	}
	id.sentDREQ = true
	if id.qp != nil {
		id.qp.toError()
	}
	o := id.other
	if id.gotDREQ {
		// This side answers (IB's DREP): the side that started hears
		// of the end now.
		id.answerDREQ()
		return nil
	}
	if o == nil || o.dead {
		// No one to answer: the DREQ times out (after seconds on a real
		// device; at once here) and this side hears of the end.
		id.ch.push(CMEvent{Type: EventDisconnected, ID: id})
		return nil
	}
	// This side starts (IB's DREQ): the other side gets DISCONNECTED and
	// its QP fails; this side gets DISCONNECTED only when the other
	// answers, with its own rdma_disconnect or rdma_destroy_id, as IB's
	// CM does (the conformance table checks it against rxe).
	o.gotDREQ = true
	if o.qp != nil {
		o.qp.toError()
	}
	o.ch.push(CMEvent{Type: EventDisconnected, ID: o})
	return nil
}

// answerDREQ tells the side that disconnected first that id, which got
// its DREQ, has answered (fab held).
func (id *CMID) answerDREQ() {
	if o := id.other; o != nil && !o.dead && o.sentDREQ {
		o.ch.push(CMEvent{Type: EventDisconnected, ID: o})
	}
}

// FakeDisconnect ends the connection from the other side of id, as a peer
// that calls rdma_disconnect: id gets DISCONNECTED and its QP fails.
func (id *CMID) FakeDisconnect() error {
	fab.Lock()
	defer fab.Unlock()
	if id.other == nil {
		return callError("rdma_disconnect", syscall.EINVAL)
	}
	return id.other.disconnect()
}

// NotifyEstablished does nothing.
func (id *CMID) NotifyEstablished() error {
	if e := injectHit(siteNotify); e != 0 {
		return callError("rdma_notify", e)
	}
	return nil
}

// Migrate moves the id (and its pending events) to ch.
func (id *CMID) Migrate(ch *EventChannel) error {
	if e := injectHit(siteMigrateID); e != 0 {
		return callError("rdma_migrate_id", e)
	}
	fab.Lock()
	defer fab.Unlock()
	old := id.ch
	id.ch = ch
	if old != nil {
		k := 0
		for _, ev := range old.evs {
			if ev.ID == id {
				ch.push(ev)
				continue
			}
			old.evs[k] = ev
			k++
		}
		old.evs = old.evs[:k]
		old.n.set(k > 0)
	}
	return nil
}

// CreateQP creates the id's RC queue pair (in state INIT until the
// connection is established).
func (id *CMID) CreateQP(a *QPInitAttr) (QPCap, error) {
	if e := injectHit(siteCreateQP); e != 0 {
		return QPCap{}, callError("rdma_create_qp_ex", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if id.qp != nil || a.PD == nil || a.SendCQ == nil || a.RecvCQ == nil ||
		a.MaxSendWR == 0 || int(a.MaxSendWR) > FakeDeviceAttr.MaxQPWR || int(a.MaxRecvWR) > FakeDeviceAttr.MaxQPWR {
		return QPCap{}, callError("rdma_create_qp_ex", syscall.EINVAL)
	}
	q := &QP{key: newKey(), state: qpStateInit, sendCQ: a.SendCQ, recvCQ: a.RecvCQ, srq: a.SRQ,
		maxSend: int(a.MaxSendWR), maxRecv: int(a.MaxRecvWR), sigAll: a.SQSigAll, timing: fakeInherit}
	q.num = uint32(q.key)
	if q.srq != nil {
		q.srq.qps = append(q.srq.qps, q)
	}
	qps[q.key] = q
	id.qp = q
	objInc(ObjQP)
	inline := a.MaxInlineData
	if inline < 64 {
		inline = 64
	}
	return QPCap{MaxSendWR: a.MaxSendWR, MaxRecvWR: a.MaxRecvWR, MaxSendSGE: max(a.MaxSendSGE, 1),
		MaxRecvSGE: max(a.MaxRecvSGE, 1), MaxInlineData: inline}, nil
}

// QP returns the id's queue pair, nil if it has none.
func (id *CMID) QP(bool) *QP {
	fab.Lock()
	defer fab.Unlock()
	return id.qp
}

// HasQP reports whether the id has a QP.
func (id *CMID) HasQP() bool {
	fab.Lock()
	defer fab.Unlock()
	return id.qp != nil
}

// QPNum returns the QP's number, 0 without one.
func (id *CMID) QPNum() uint32 {
	fab.Lock()
	defer fab.Unlock()
	if id.qp == nil {
		return 0
	}
	return id.qp.num
}

// DestroyQP destroys the id's QP, dropping what is outstanding: the other
// side's requests to it get no answer from then on.
func (id *CMID) DestroyQP() {
	fab.Lock()
	defer fab.Unlock()
	id.destroyQP()
}

func (id *CMID) destroyQP() {
	q := id.qp
	if q == nil {
		return
	}
	// What is outstanding is dropped without a completion: a destroyed
	// QP completes nothing (close's waits end by their own wake-up).
	q.state, q.held, q.recvs, q.waiting = QPStateErr, nil, nil, nil
	q.dead = true
	if q.srq != nil {
		k := 0
		for _, x := range q.srq.qps {
			if x != q {
				q.srq.qps[k] = x
				k++
			}
		}
		q.srq.qps = q.srq.qps[:k]
	}
	delete(qps, q.key)
	id.qp = nil
	objDec(ObjQP)
}

// Destroy destroys the id: a listener stops listening, a pending request
// is rejected, a connection ends (the other side gets DISCONNECTED).
func (id *CMID) Destroy() error {
	if id == nil {
		return nil
	}
	if e := injectHit(siteDestroyID); e != 0 {
		return callError("rdma_destroy_id", e)
	}
	fab.Lock()
	defer fab.Unlock()
	if id.dead {
		return nil
	}
	if id.listening && listeners[id.local] == id {
		delete(listeners, id.local)
	}
	o := id.other
	switch {
	case o == nil || o.dead:
	case id.connected:
		switch {
		case !id.sentDREQ && !id.gotDREQ:
			id.disconnect()
		case id.gotDREQ && !id.sentDREQ:
			id.answerDREQ() // destroying the id answers the DREQ
		}
	case id.listener != nil && !id.accepted && !id.rejected:
		o.other = nil
		o.ch.push(CMEvent{Type: EventRejected, Status: fakeRejConsumer, ID: o})
	case id.listener == nil && !id.connected:
		// An active id gone before the answer: its request fails.
		o.other = nil
	}
	if id.qp != nil {
		id.destroyQP()
	}
	id.dead = true
	objDec(ObjCMID)
	return nil
}

// LocalAddr returns the id's local address.
func (id *CMID) LocalAddr() SockAddr {
	fab.Lock()
	defer fab.Unlock()
	return id.local
}

// PeerAddr returns the other side's address.
func (id *CMID) PeerAddr() SockAddr {
	fab.Lock()
	defer fab.Unlock()
	return id.peerAddr
}

// AddrInfo is a resolved address.
type AddrInfo struct {
	a    netip.AddrPort
	dead bool
}

// GetAddrInfo resolves node (an IP address, or "localhost") and service
// (a port number, "" for 0).
func GetAddrInfo(node, service string, passive bool) (*AddrInfo, error) {
	if e := injectHit(siteGetAddrInfo); e != 0 {
		return nil, callError("rdma_getaddrinfo", e)
	}
	if node == "localhost" {
		node = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(node)
	if err != nil {
		return nil, &AddrInfoError{Code: -2, Msg: "Name or service not known"}
	}
	var port uint64
	if service != "" {
		if port, err = strconv.ParseUint(service, 10, 16); err != nil {
			return nil, &AddrInfoError{Code: -8, Msg: "Servname not supported for ai_socktype"}
		}
	}
	objInc(ObjAddrInfo)
	return &AddrInfo{a: netip.AddrPortFrom(ip.Unmap(), uint16(port))}, nil
}

// Free drops the result.
func (ai *AddrInfo) Free() {
	if ai == nil || ai.dead {
		return
	}
	ai.dead = true
	objDec(ObjAddrInfo)
}
