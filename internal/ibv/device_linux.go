//go:build linux && cgo && !rpma_fake

package ibv

/*
#cgo LDFLAGS: -libverbs
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include "rpma_inject.h"

// rpma_ibv_query is one crossing for ibv_query_device_ex. It returns the
// error number (0 on success); ibv_query_device_ex returns it directly.
static int rpma_ibv_query(struct ibv_context *ctx, struct ibv_device_attr_ex *attr) {
	memset(attr, 0, sizeof(*attr));
	int e = RPMA_INJECT(QUERY_DEVICE_EX);
	return e ? e : ibv_query_device_ex(ctx, NULL, attr);
}

static int rpma_ibv_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr) {
	memset(attr, 0, sizeof(*attr));
	int e = RPMA_INJECT(QUERY_PORT);
	return e ? e : ibv_query_port(ctx, port, attr);
}

// The wrappers below hold the fault-injection sites of the calls the Go
// code makes (rpma_inject.h); each keeps its call's way of failing. The
// device list is fetched by two of them, one per Go caller, so that each
// caller is a site of its own.
static struct ibv_device **rpma_get_device_list_names(int *n) {
	int e = RPMA_INJECT(GET_DEVICE_LIST);
	if (e) {
		errno = e;
		return NULL;
	}
	return ibv_get_device_list(n);
}

static struct ibv_device **rpma_get_device_list_open(int *n) {
	int e = RPMA_INJECT(GET_DEVICE_LIST_OPEN);
	if (e) {
		errno = e;
		return NULL;
	}
	return ibv_get_device_list(n);
}

static struct ibv_context *rpma_open_device(struct ibv_device *dev) {
	int e = RPMA_INJECT(OPEN_DEVICE);
	if (e) {
		errno = e;
		return NULL;
	}
	return ibv_open_device(dev);
}

// An injected failure of ibv_close_device leaves the device open: the next
// Close closes it.
static int rpma_close_device(struct ibv_context *ctx) {
	int e = RPMA_INJECT(CLOSE_DEVICE);
	if (e) {
		errno = e;
		return -1;
	}
	return ibv_close_device(ctx);
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// DeviceNames lists the RDMA devices (ibv_get_device_list).
func DeviceNames() ([]string, error) {
	var n C.int
	list, errno := C.rpma_get_device_list_names(&n)
	if list == nil {
		return nil, callError("ibv_get_device_list", errnoOf(errno))
	}
	defer C.ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		names = append(names, C.GoString(C.ibv_get_device_name(d)))
	}
	return names, nil
}

// Context is an open device (struct ibv_context). It is not safe to Close
// concurrently with other calls on it.
type Context struct {
	c     *C.struct_ibv_context
	owned bool // opened by OpenDevice (else borrowed from an rdma_cm id)
}

// OpenDevice opens the device called name (ibv_open_device).
func OpenDevice(name string) (*Context, error) {
	var n C.int
	list, errno := C.rpma_get_device_list_open(&n)
	if list == nil {
		return nil, callError("ibv_get_device_list", errnoOf(errno))
	}
	defer C.ibv_free_device_list(list)
	for _, d := range unsafe.Slice(list, int(n)) {
		if C.GoString(C.ibv_get_device_name(d)) != name {
			continue
		}
		c, errno := C.rpma_open_device(d)
		if c == nil {
			return nil, callError("ibv_open_device", errnoOf(errno))
		}
		objInc(ObjContext)
		return &Context{c: c, owned: true}, nil
	}
	return nil, fmt.Errorf("ibv: no device named %q: %w", name, syscall.ENODEV)
}

// Name is the device's name (ibv_get_device_name).
func (c *Context) Name() string { return C.GoString(C.ibv_get_device_name(c.c.device)) }

// QueryDevice returns the device's attributes (ibv_query_device_ex).
func (c *Context) QueryDevice() (DeviceAttr, error) {
	var a C.struct_ibv_device_attr_ex
	if rc := C.rpma_ibv_query(c.c, &a); rc != 0 {
		return DeviceAttr{}, callError("ibv_query_device_ex", syscall.Errno(rc))
	}
	o := &a.orig_attr
	return DeviceAttr{
		Name:            c.Name(),
		FWVer:           C.GoString(&o.fw_ver[0]),
		NodeGUID:        uint64(o.node_guid),
		VendorID:        uint32(o.vendor_id),
		VendorPartID:    uint32(o.vendor_part_id),
		PhysPortCnt:     int(o.phys_port_cnt),
		MaxMRSize:       uint64(o.max_mr_size),
		MaxQP:           int(o.max_qp),
		MaxQPWR:         int(o.max_qp_wr),
		MaxSGE:          int(o.max_sge),
		MaxCQ:           int(o.max_cq),
		MaxCQE:          int(o.max_cqe),
		MaxMR:           int(o.max_mr),
		MaxSRQ:          int(o.max_srq),
		MaxSRQWR:        int(o.max_srq_wr),
		MaxQPRdAtom:     int(o.max_qp_rd_atom),
		MaxQPInitRdAtom: int(o.max_qp_init_rd_atom),
		AtomicCap:       int(o.atomic_cap),
		DeviceCapFlags:  uint64(o.device_cap_flags),
		CapFlagsEx:      uint64(a.device_cap_flags_ex),
		ODPGeneralCaps:  uint64(a.odp_caps.general_caps),
		ODPRCCaps:       uint32(a.odp_caps.per_transport_caps.rc_odp_caps),
	}, nil
}

// QueryPort returns the attributes of port (1-based; ibv_query_port).
func (c *Context) QueryPort(port int) (PortAttr, error) {
	var a C.struct_ibv_port_attr
	if rc := C.rpma_ibv_query_port(c.c, C.uint8_t(port), &a); rc != 0 {
		return PortAttr{}, callError("ibv_query_port", syscall.Errno(rc))
	}
	return PortAttr{
		State:     PortState(a.state),
		ActiveMTU: 128 << int(a.active_mtu),
		LinkLayer: int(a.link_layer),
	}, nil
}

// Close closes a device opened by OpenDevice (ibv_close_device). It is a
// no-op on a nil or already closed Context and on one borrowed from an
// rdma_cm id. After a failed close the Context stays open, so that Close
// can be called again.
func (c *Context) Close() error {
	if c == nil || c.c == nil {
		return nil
	}
	if !c.owned {
		c.c = nil
		return nil
	}
	if rc, errno := C.rpma_close_device(c.c); rc != 0 {
		return callError("ibv_close_device", errnoOf(errno))
	}
	c.c = nil
	objDec(ObjContext)
	return nil
}

// errnoOf extracts the errno a cgo call reported (nil when none).
func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return 0
}
