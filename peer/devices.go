package peer

import (
	"context"

	"github.com/gorpma/rpma/internal/core"
)

// DeviceInfo describes one RDMA device: what [Devices] reports.
type DeviceInfo struct {
	Name      string // for example "rxe0"
	PortState string // port 1's state: "ACTIVE", "DOWN", "INIT", ...
	ActiveMTU int    // port 1's active MTU, in bytes
	// NativeAtomicWrite and NativeFlush report whether the device does
	// atomic write and RDMA FLUSH itself; the library emulates them
	// otherwise (see [Peer.NativeAtomicWrite], [Peer.NativeFlush]).
	NativeAtomicWrite bool
	NativeFlush       bool
	ODP               bool // on-demand paging for RC reads and writes
	MaxQP             int
	MaxCQE            int
	MaxQPWR           int
	MaxMRSize         uint64
}

// Devices lists the RDMA devices on this host and what each can do. No
// device is an empty list, not an error. A failing verbs call matches
// rpma.ErrProvider and its errno.
func Devices() ([]DeviceInfo, error) {
	infos, err := core.ListDevices()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, len(infos))
	for i, info := range infos {
		out[i] = DeviceInfo(info)
	}
	return out, nil
}

// ListenDevice returns the RDMA device a listener on addr (an IP address
// or host name of this host) would use: what [DeviceForAddress] finds
// with rpma.IbvContextLocal, under a Go name and with a ctx.
//
// Errors as for DeviceForAddress; if ctx ends first, ctx.Err().
func ListenDevice(ctx context.Context, addr string) (*Device, error) {
	d, err := core.LookupDevice(ctx, addr, true)
	return (*Device)(d), err
}

// DialDevice returns the RDMA device through which a connection to addr
// (the server's IP address or host name) would go: what
// [DeviceForAddress] finds with rpma.IbvContextRemote, under a Go name
// and with a ctx. The route's resolution waits at most until ctx's
// deadline (without one, at most librpma's 1000 ms); if ctx ends first,
// DialDevice returns ctx.Err() at once.
//
// Errors as for DeviceForAddress; if ctx ends first, ctx.Err().
func DialDevice(ctx context.Context, addr string) (*Device, error) {
	d, err := core.LookupDevice(ctx, addr, false)
	return (*Device)(d), err
}
