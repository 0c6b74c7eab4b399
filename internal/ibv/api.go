package ibv

import (
	"syscall"
	"unsafe"
)

// The package's API has three implementations, one per build: the cgo
// files (*_linux.go, Linux with cgo), the fake (fake*.go, the tag
// rpma_fake: pure Go, for host tests of internal/core) and the stubs
// (*_other.go, neither: every call fails with ErrNotSupported). The
// interfaces below are the method sets internal/core relies on, asserted
// in every build, so that a method missing or differing in one
// implementation fails the build. They are only assertions: core calls
// the concrete types, and the normal build's hot path pays nothing.

type contextAPI interface {
	Name() string
	QueryDevice() (DeviceAttr, error)
	QueryPort(int) (PortAttr, error)
	Close() error
	Same(*Context) bool
	IsIWARP() bool
	AsyncFD() int
	Key() uintptr
	GetAsyncEvent() (AsyncEvent, error)
	AllocPD() (*PD, error)
	CreateCompChannel() (*CompChannel, error)
	CreateCQ(int, *CompChannel, int) (*CQ, error)
}

type pdAPI interface {
	Context() *Context
	Dealloc() error
	RegMR(unsafe.Pointer, int, int) (*MR, error)
	AdviseMR(int, uint32, uint64, uint32, uint32) error
	CreateSRQ(int) (*SRQ, int, error)
	AllocMW2() (*MW, error)
}

type mrAPI interface{ Dereg() error }

type mwAPI interface{ Dealloc() error }

type compChannelAPI interface {
	FD() int
	GetCQEvent(bool, int) (CQRef, error)
	GetCQEventRearm() (CQRef, error)
	WaitCQEvent(int, int, bool, bool, int) (WaitReady, CQRef, bool, error)
	Destroy() error
}

type cqAPI interface {
	Is(CQRef) bool
	Same(*CQ) bool
	CQE() int
	ReqNotify(bool) error
	ArmPoll(*WCBuf, int, int) (int, error)
	AckEvents(int)
	Poll(*WCBuf, int, int) (int, error)
	ReapInto(*WCBuf, int, int) Reap
	Resize(int) error
	Destroy() error
	Key() uintptr
}

type qpAPI interface {
	HasAtomicWrite() bool
	HasFlush() bool
	ToError() error
	State() (int, error)
	Key() uintptr
	PostSend(uint64, SendOp, uint32, uint64, uint32, uint32, uint64, uint32, uint32, Reap) (syscall.Errno, int)
	PostWriteRead(uint64, uint32, uint64, uint32, uint32, uint64, uint32, uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int, int)
	PostBatch([]BatchWR, Reap) (syscall.Errno, int, int)
	PostInline8(uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int)
	PostAtomicWrite(uint64, uint32, uint64, uint32, uint64, Reap) (syscall.Errno, int)
	PostAtomic(uint64, SendOp, uint32, uint64, uint32, uint64, uint32, uint64, uint64, Reap) (syscall.Errno, int)
	PostRecv(uint64, uint64, uint32, uint32) syscall.Errno
	PostBindMW(uint64, uint32, *MW, uint32, *MR, uint64, uint64, int, Reap) (syscall.Errno, int)
	PostFlush(uint64, uint32, uint64, uint32, uint64, uint8, Reap) (syscall.Errno, int)
	PostWriteFlush(uint64, uint32, uint64, uint32, uint32, uint64, uint32, uint64, uint32, uint64, uint8, Reap) (syscall.Errno, int)
}

type srqAPI interface {
	PostRecv(uint64, uint64, uint32, uint32) syscall.Errno
	Destroy() error
	Key() uintptr
}

type wcBufAPI interface {
	Slice() []WC
	Free()
}

type eventChannelAPI interface {
	FD() int
	GetEvent() (CMEvent, error)
	Destroy()
}

type cmidAPI interface {
	Same(*CMID) bool
	Verbs() *Context
	BindAddr(*AddrInfo) error
	ResolveAddr(*AddrInfo, int) error
	ResolveRoute(int) error
	Listen(int) error
	Connect(*ConnParam) error
	Accept(*ConnParam) error
	Reject([]byte) error
	SetAckTimeout(uint8) error
	Disconnect() error
	NotifyEstablished() error
	Migrate(*EventChannel) error
	CreateQP(*QPInitAttr) (QPCap, error)
	QP(bool) *QP
	HasQP() bool
	QPNum() uint32
	DestroyQP()
	Destroy() error
	LocalAddr() SockAddr
	PeerAddr() SockAddr
}

type addrInfoAPI interface{ Free() }

var (
	_ contextAPI      = (*Context)(nil)
	_ pdAPI           = (*PD)(nil)
	_ mrAPI           = (*MR)(nil)
	_ mwAPI           = (*MW)(nil)
	_ compChannelAPI  = (*CompChannel)(nil)
	_ cqAPI           = (*CQ)(nil)
	_ qpAPI           = (*QP)(nil)
	_ srqAPI          = (*SRQ)(nil)
	_ wcBufAPI        = (*WCBuf)(nil)
	_ eventChannelAPI = (*EventChannel)(nil)
	_ cmidAPI         = (*CMID)(nil)
	_ addrInfoAPI     = (*AddrInfo)(nil)

	// The package-level functions, by their types.
	_ func() ([]string, error)                      = DeviceNames
	_ func(string) (*Context, error)                = OpenDevice
	_ func() (*EventChannel, error)                 = CreateEventChannel
	_ func(*EventChannel) (*CMID, error)            = CreateID
	_ func(string, string, bool) (*AddrInfo, error) = GetAddrInfo
	_ func(int) (*WCBuf, error)                     = NewWCBuf
	_ func()                                        = Crossing
	_ func(int) syscall.Errno                       = InjectGo
	_ [1]struct{}                                   = [len([...]bool{InjectBuild})]struct{}{}
	_ struct {
		Addr, Length uint64
		LKey, RKey   uint32
	} = struct {
		Addr, Length uint64
		LKey, RKey   uint32
	}{MR{}.Addr, MR{}.Length, MR{}.LKey, MR{}.RKey}
	_ uint32 = MW{}.RKey
)
