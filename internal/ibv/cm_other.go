//go:build !linux || (!cgo && !rpma_fake)

package ibv

// EventChannel is an rdma_cm event channel; this build cannot create one.
type EventChannel struct{}

// CreateEventChannel returns ErrNotSupported in this build.
func CreateEventChannel() (*EventChannel, error) { return nil, ErrNotSupported }

// FD returns -1.
func (ch *EventChannel) FD() int { return -1 }

// GetEvent returns ErrNotSupported in this build.
func (ch *EventChannel) GetEvent() (CMEvent, error) { return CMEvent{}, ErrNotSupported }

// Destroy does nothing.
func (ch *EventChannel) Destroy() {}

// CMID is an rdma_cm identifier; this build cannot create one.
type CMID struct{}

// CreateID returns ErrNotSupported in this build.
func CreateID(*EventChannel) (*CMID, error) { return nil, ErrNotSupported }

// Same reports false.
func (id *CMID) Same(*CMID) bool { return false }

// Verbs returns nil.
func (id *CMID) Verbs() *Context { return nil }

// BindAddr returns ErrNotSupported in this build.
func (id *CMID) BindAddr(*AddrInfo) error { return ErrNotSupported }

// ResolveAddr returns ErrNotSupported in this build.
func (id *CMID) ResolveAddr(*AddrInfo, int) error { return ErrNotSupported }

// ResolveRoute returns ErrNotSupported in this build.
func (id *CMID) ResolveRoute(int) error { return ErrNotSupported }

// Listen returns ErrNotSupported in this build.
func (id *CMID) Listen(int) error { return ErrNotSupported }

// Connect returns ErrNotSupported in this build.
func (id *CMID) Connect(*ConnParam) error { return ErrNotSupported }

// Accept returns ErrNotSupported in this build.
func (id *CMID) Accept(*ConnParam) error { return ErrNotSupported }

// Reject returns ErrNotSupported in this build.
func (id *CMID) Reject([]byte) error { return ErrNotSupported }

// SetAckTimeout returns ErrNotSupported in this build.
func (id *CMID) SetAckTimeout(uint8) error { return ErrNotSupported }

// Disconnect returns ErrNotSupported in this build.
func (id *CMID) Disconnect() error { return ErrNotSupported }

// NotifyEstablished returns ErrNotSupported in this build.
func (id *CMID) NotifyEstablished() error { return ErrNotSupported }

// Migrate returns ErrNotSupported in this build.
func (id *CMID) Migrate(*EventChannel) error { return ErrNotSupported }

// CreateQP returns ErrNotSupported in this build.
func (id *CMID) CreateQP(*QPInitAttr) (QPCap, error) { return QPCap{}, ErrNotSupported }

// HasQP reports false.
func (id *CMID) HasQP() bool { return false }

// QPNum returns 0.
func (id *CMID) QPNum() uint32 { return 0 }

// DestroyQP does nothing.
func (id *CMID) DestroyQP() {}

// Destroy does nothing.
func (id *CMID) Destroy() error { return nil }

// LocalAddr returns the zero value.
func (id *CMID) LocalAddr() SockAddr { return SockAddr{} }

// PeerAddr returns the zero value.
func (id *CMID) PeerAddr() SockAddr { return SockAddr{} }

// AddrInfo is an rdma_getaddrinfo result; this build cannot produce one.
type AddrInfo struct{}

// GetAddrInfo returns ErrNotSupported in this build.
func GetAddrInfo(string, string, bool) (*AddrInfo, error) { return nil, ErrNotSupported }

// Free does nothing.
func (ai *AddrInfo) Free() {}
