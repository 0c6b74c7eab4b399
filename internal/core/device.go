package core

import (
	"sync/atomic"
	"syscall"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// defaultTimeoutMs is librpma's RPMA_DEFAULT_TIMEOUT_MS.
const defaultTimeoutMs = 1000

// Device is an RDMA device found through an address, as
// rpma_utils_get_ibv_context finds it. Its ibv context belongs to
// librdmacm, which keeps it open for the life of the process, so Close
// destroys nothing; it exists so that the device's users (peers) can be
// counted and the handle retired.
type Device struct {
	life
	ctx   *ibv.Context
	name  string
	peers atomic.Int64
	leak  *leak.Handle
}

// DeviceForAddress mirrors rpma_utils_get_ibv_context.
func DeviceForAddress(addr string, typ rpma.UtilIbvContextType) (*Device, error) {
	const op = "utils_get_ibv_context"
	if addr == "" {
		return nil, rpmaerr.Inval(op, "empty address")
	}
	var passive bool
	switch typ {
	case rpma.IbvContextLocal:
		passive = true
	case rpma.IbvContextRemote:
	default:
		return nil, rpmaerr.Inval(op, "unknown context type %d", int(typ))
	}
	return deviceFor(addr, passive, defaultTimeoutMs)
}

// deviceFor finds the device addr binds to (passive) or resolves through,
// waiting at most timeoutMs for the resolution.
func deviceFor(addr string, passive bool, timeoutMs int) (*Device, error) {
	const op = "utils_get_ibv_context"
	ai, err := ibv.GetAddrInfo(addr, "", passive)
	if err != nil {
		return nil, providerMsg(op, err, "node=%s, %s", addr, side(passive))
	}
	defer ai.Free()
	// A synchronous id, as librpma uses: librdmacm waits for the
	// resolution itself (at most timeoutMs).
	id, err := ibv.CreateID(nil)
	if err != nil {
		return nil, provider(op, err)
	}
	if passive {
		err = id.BindAddr(ai)
	} else {
		err = id.ResolveAddr(ai, timeoutMs)
	}
	var ctx *ibv.Context
	switch {
	case err != nil:
		err = providerMsg(op, err, "address %s", addr)
	default:
		if ctx = id.Verbs(); ctx == nil {
			err = rpmaerr.New(op, rpma.CodeInval, syscall.ENODEV,
				"address %s is not bound to an RDMA device", addr)
		}
	}
	if derr := destroyTempID(id); derr != nil && err == nil {
		err = provider(op, derr)
	}
	if err != nil {
		return nil, err
	}
	d := &Device{ctx: ctx, name: ctx.Name(), leak: leak.Track("peer.Device")}
	d.open()
	return d, nil
}

// destroyTempID destroys the id DeviceForAddress resolved with. librpma
// ignores a failure there; this library tries once more (the id would
// leak otherwise, with its fd) and reports a second failure.
func destroyTempID(id *ibv.CMID) error {
	err := id.Destroy()
	if err == nil {
		return nil
	}
	rpma.Logf(rpma.LogWarning, "utils_get_ibv_context: destroying the resolving id: %v (trying again)", err)
	return id.Destroy()
}

func side(passive bool) string {
	if passive {
		return "passive"
	}
	return "active"
}

// Name returns the device's name, for example "rxe0".
func (d *Device) Name() string {
	if d == nil {
		return ""
	}
	return d.name
}

// ODPCapable mirrors rpma_utils_ibv_context_is_odp_capable.
func (d *Device) ODPCapable() (bool, error) {
	const op = "utils_ibv_context_is_odp_capable"
	if d == nil {
		return false, errNil(op, "device")
	}
	if !d.enter() {
		return false, errClosed(op, "device")
	}
	defer d.exit()
	attr, err := d.ctx.QueryDevice()
	if err != nil {
		return false, provider(op, err)
	}
	return attr.ODP(), nil
}

// Close is peer.Device.Close's core; see there.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	d.lock()
	defer d.unlock()
	if d.finished() {
		return nil
	}
	if n := d.peers.Load(); n > 0 {
		return rpmaerr.New("device_close", rpma.CodeProvider, syscall.EBUSY,
			"%d peer(s) still use the device: close them first", n)
	}
	d.markClosed()
	d.ctx = nil
	d.leak.Release()
	return nil
}
