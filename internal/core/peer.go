package core

import (
	"errors"
	"sync/atomic"
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// Peer mirrors struct rpma_peer: one protection domain on a device, plus
// what the device can do natively, probed once.
type Peer struct {
	life
	dev  *Device
	ctx  *ibv.Context
	pd   *ibv.PD
	attr ibv.DeviceAttr

	nativeAtomicWrite bool
	nativeFlush       bool
	odp               bool
	iwarp             bool
	atomicCap         int    // ibv.AtomicNone, AtomicHCA or AtomicGlob
	tune              Tuning // what it creates copies (SetTuning)

	// children counts the open objects that use the PD or the peer:
	// endpoints, connection requests, connections, memory regions and
	// SRQs.
	children atomic.Int64
	leak     *leak.Handle
}

// Log messages of librpma's rpma_peer_new (and this module's ODP one).
const (
	msgNoNativeAtomicWrite = "Native atomic write is not supported - ordinary RDMA write will be used instead."
	msgNoNativeFlush       = "Native flush is not supported - ordinary RDMA read will be used instead."
	msgNoODP               = "On-Demand Paging is not supported - memory registration will not retry with ODP."
)

// NewPeer mirrors rpma_peer_new.
func NewPeer(dev *Device) (*Peer, error) {
	const op = "peer_new"
	if dev == nil {
		return nil, errNil(op, "device")
	}
	if !dev.enter() {
		return nil, errClosed(op, "device")
	}
	defer dev.exit()

	attr, err := dev.ctx.QueryDevice()
	if err != nil {
		return nil, provider(op, err)
	}
	p := &Peer{
		dev:               dev,
		ctx:               dev.ctx,
		attr:              attr,
		nativeAtomicWrite: attr.NativeAtomicWrite(),
		nativeFlush:       attr.NativeFlush() && ibv.HaveWRFlush,
		odp:               attr.ODP(),
		atomicCap:         attr.AtomicCap,
		iwarp:             dev.ctx.IsIWARP(),
	}
	if !p.nativeAtomicWrite {
		rpma.Logf(rpma.LogInfo, msgNoNativeAtomicWrite)
	}
	if !p.nativeFlush {
		rpma.Logf(rpma.LogInfo, msgNoNativeFlush)
	}
	if !p.odp {
		rpma.Logf(rpma.LogInfo, msgNoODP)
	}

	pd, err := dev.ctx.AllocPD()
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) || errno == 0 {
			return nil, rpmaerr.New("ibv_alloc_pd", rpma.CodeUnknown, 0, "failed without errno")
		}
		if errno == syscall.ENOMEM {
			return nil, rpmaerr.New("ibv_alloc_pd", rpma.CodeNoMem, errno, "")
		}
		return nil, provider(op, err)
	}
	p.pd = pd
	dev.peers.Add(1)
	watchDevice(dev.ctx)
	p.leak = leak.Track("peer.Peer")
	p.open()
	return p, nil
}

// NativeAtomicWrite is peer.Peer.NativeAtomicWrite's core; see there.
func (p *Peer) NativeAtomicWrite() bool { return p != nil && p.nativeAtomicWrite }

// NativeFlush is peer.Peer.NativeFlush's core; see there.
func (p *Peer) NativeFlush() bool { return p != nil && p.nativeFlush }

// ODP is peer.Peer.ODP's core; see there.
func (p *Peer) ODP() bool { return p != nil && p.odp }

// Device returns the device the peer was created on.
func (p *Peer) Device() *Device {
	if p == nil {
		return nil
	}
	return p.dev
}

// Children returns how many open objects use the peer.
func (p *Peer) Children() int64 {
	if p == nil {
		return 0
	}
	return p.children.Load()
}

// acquire registers a new child. It fails when the peer is nil or closed.
func (p *Peer) acquire(op string) error {
	if p == nil {
		return errNil(op, "peer")
	}
	if !p.enter() {
		return errClosed(op, "peer")
	}
	p.children.Add(1)
	p.exit()
	return nil
}

// release unregisters a child.
func (p *Peer) release() { p.children.Add(-1) }

// Close is peer.Peer.Close's core; see there.
func (p *Peer) Close() error {
	if p == nil {
		return nil
	}
	p.lock()
	defer p.unlock()
	if p.finished() {
		return nil
	}
	if n := p.children.Load(); n > 0 {
		return rpmaerr.New("peer_delete", rpma.CodeProvider, syscall.EBUSY,
			"%d object(s) (endpoints, connection requests, connections, memory regions, SRQs) still use the peer: close them first", n)
	}
	p.markClosed()
	if err := p.pd.Dealloc(); err != nil {
		p.closeFailed() // the PD stays; a retried Close deallocates it
		return provider("peer_delete", err)
	}
	unwatchDevice(p.ctx)
	p.dev.peers.Add(-1)
	p.leak.Release()
	return nil
}
