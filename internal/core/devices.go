package core

import (
	"context"
	"time"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
)

// DeviceInfo is what ListDevices reports of one RDMA device.
type DeviceInfo struct {
	Name              string
	PortState         string // port 1's state: "ACTIVE", "DOWN", ...
	ActiveMTU         int    // port 1's active MTU, in bytes
	NativeAtomicWrite bool
	NativeFlush       bool
	ODP               bool
	MaxQP             int
	MaxCQE            int
	MaxQPWR           int
	MaxMRSize         uint64
}

// ListDevices lists the RDMA devices (ibv_get_device_list) and what each
// can do (ibv_query_device_ex, ibv_query_port on port 1).
func ListDevices() ([]DeviceInfo, error) {
	const op = "list_devices"
	names, err := ibv.DeviceNames()
	if err != nil {
		return nil, provider(op, err)
	}
	infos := make([]DeviceInfo, 0, len(names))
	for _, name := range names {
		info, err := queryDevice(name)
		if err != nil {
			return nil, provider(op, err)
		}
		infos = append(infos, info)
	}
	return infos, nil
}

func queryDevice(name string) (DeviceInfo, error) {
	c, err := ibv.OpenDevice(name)
	if err != nil {
		return DeviceInfo{}, err
	}
	defer c.Close()
	a, err := c.QueryDevice()
	if err != nil {
		return DeviceInfo{}, err
	}
	p, err := c.QueryPort(1)
	if err != nil {
		return DeviceInfo{}, err
	}
	return DeviceInfo{
		Name:              name,
		PortState:         p.State.String(),
		ActiveMTU:         p.ActiveMTU,
		NativeAtomicWrite: a.NativeAtomicWrite(),
		NativeFlush:       a.NativeFlush(),
		ODP:               a.ODP(),
		MaxQP:             a.MaxQP,
		MaxCQE:            a.MaxCQE,
		MaxQPWR:           a.MaxQPWR,
		MaxMRSize:         a.MaxMRSize,
	}, nil
}

// LookupDevice is DeviceForAddress with a ctx: the device addr binds to
// (passive) or resolves through. The resolution waits at most until
// ctx's deadline, and at most librpma's 1000 ms without one. When ctx
// ends first, LookupDevice returns ctx.Err() at once; the resolution,
// a blocking librdmacm call, finishes on its own and retires what it
// found.
func LookupDevice(ctx context.Context, addr string, passive bool) (*Device, error) {
	const op = "utils_get_ibv_context"
	if addr == "" {
		return nil, rpmaerr.Inval(op, "empty address")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := defaultTimeoutMs
	if dl, ok := ctx.Deadline(); ok {
		ms := time.Until(dl).Milliseconds()
		if ms < 1 {
			return nil, context.DeadlineExceeded
		}
		timeout = int(min(ms, int64(timeout)))
	}
	type found struct {
		d   *Device
		err error
	}
	done := make(chan found, 1)
	go func() {
		d, err := deviceFor(addr, passive, timeout)
		done <- found{d, err}
	}()
	select {
	case f := <-done:
		return f.d, f.err
	case <-ctx.Done():
		go func() {
			if f := <-done; f.d != nil {
				_ = f.d.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
