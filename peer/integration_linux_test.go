//go:build linux && cgo

package peer_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// nativeExpected reports whether the test kernel's rxe does atomic write and
// flush natively (Linux 6.2 and later).
func nativeExpected(t *testing.T) bool {
	rel := rdmatest.Kernel()
	if rel == "" {
		var u syscall.Utsname
		require.NoError(t, syscall.Uname(&u))
		b := make([]byte, 0, len(u.Release))
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		rel = string(b)
	}
	parts := strings.SplitN(rel, ".", 3)
	require.GreaterOrEqual(t, len(parts), 2, rel)
	major, err := strconv.Atoi(parts[0])
	require.NoError(t, err)
	minor, err := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	require.NoError(t, err)
	return major > 6 || (major == 6 && minor >= 2)
}

func TestIntegrationDeviceForAddress(t *testing.T) {
	ip := rdmatest.IP(t)
	for _, typ := range []rpma.UtilIbvContextType{rpma.IbvContextLocal, rpma.IbvContextRemote} {
		dev, err := peer.DeviceForAddress(ip, typ)
		require.NoError(t, err, typ)
		require.Equal(t, "rxe0", dev.Name(), typ)
		odp, err := dev.ODPCapable()
		require.NoError(t, err)
		require.False(t, odp, "rxe has no on-demand paging")
		require.NoError(t, dev.Close())
		require.NoError(t, dev.Close(), "Close is idempotent")
		_, err = dev.ODPCapable()
		require.ErrorIs(t, err, os.ErrClosed)
	}
}

// TestIntegrationDevices: the device list names rxe0, port 1 active,
// with the capabilities this kernel's rxe has.
func TestIntegrationDevices(t *testing.T) {
	rdmatest.SkipIfNoRDMA(t)
	infos, err := peer.Devices()
	require.NoError(t, err)
	require.Len(t, infos, 1, "%+v", infos)
	d := infos[0]
	require.Equal(t, "rxe0", d.Name)
	require.Equal(t, "ACTIVE", d.PortState)
	require.Positive(t, d.ActiveMTU)
	require.Equal(t, nativeExpected(t), d.NativeAtomicWrite, "kernel %s", rdmatest.Kernel())
	require.Equal(t, nativeExpected(t), d.NativeFlush, "kernel %s", rdmatest.Kernel())
	require.False(t, d.ODP, "rxe has no on-demand paging")
	require.Positive(t, d.MaxQP)
	require.Positive(t, d.MaxCQE)
	require.Positive(t, d.MaxQPWR)
	require.Positive(t, d.MaxMRSize)
}

// TestIntegrationListenDialDevice: the Go-named lookups find what
// DeviceForAddress finds, and give up with their ctx.
func TestIntegrationListenDialDevice(t *testing.T) {
	ip := rdmatest.IP(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, lookup := range map[string]func(context.Context, string) (*peer.Device, error){
		"listen": peer.ListenDevice, "dial": peer.DialDevice,
	} {
		dev, err := lookup(ctx, ip)
		require.NoError(t, err, name)
		require.Equal(t, "rxe0", dev.Name(), name)
		require.NoError(t, dev.Close())
	}
	// The errors of DeviceForAddress.
	_, err := peer.ListenDevice(ctx, "0.0.0.0")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, err, syscall.ENODEV)
	_, err = peer.ListenDevice(ctx, "198.51.100.1")
	require.ErrorIs(t, err, syscall.EADDRNOTAVAIL)
	_, err = peer.DialDevice(ctx, "198.51.100.1")
	require.ErrorIs(t, err, syscall.ENETUNREACH)
	// A deadline in the future leaves the lookup as it is (rxe resolves
	// an address on its subnet without waiting for an answer, so no
	// address here makes the resolution outlast a deadline).
	short, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	dev, err := peer.DialDevice(short, ip)
	require.NoError(t, err)
	require.NoError(t, dev.Close())
}

func TestIntegrationDeviceForAddressErrors(t *testing.T) {
	rdmatest.SkipIfNoRDMA(t)
	// A wildcard address binds to no device.
	_, err := peer.DeviceForAddress("0.0.0.0", rpma.IbvContextLocal)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, err, syscall.ENODEV)
	// Not an address of this host.
	_, err = peer.DeviceForAddress("198.51.100.1", rpma.IbvContextLocal)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.EADDRNOTAVAIL)
	// No route to it.
	_, err = peer.DeviceForAddress("198.51.100.1", rpma.IbvContextRemote)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.ENETUNREACH)
	// Not an address at all.
	_, err = peer.DeviceForAddress("no-such-host.invalid", rpma.IbvContextRemote)
	require.ErrorIs(t, err, rpma.ErrProvider)
	t.Logf("unknown host: %v", err)
}

func TestIntegrationPeer(t *testing.T) {
	ip := rdmatest.IP(t)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(t, err)

	// Capture what the peer logs at INFO.
	var mu sync.Mutex
	var logged []string
	old, err := rpma.LogThresholdOf(rpma.LogThresholdPrimary)
	require.NoError(t, err)
	require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogInfo))
	rpma.SetLogFunction(func(level rpma.LogLevel, _ string, _ int, _ string, msg string) {
		if level == rpma.LogInfo {
			mu.Lock()
			logged = append(logged, msg)
			mu.Unlock()
		}
	})
	p, err := peer.New(dev)
	rpma.SetLogFunction(nil)
	require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdPrimary, old))
	require.NoError(t, err)

	native := nativeExpected(t)
	require.Equal(t, native, p.NativeAtomicWrite(), "kernel %s", rdmatest.Kernel())
	// Native flush needs the device's flush capabilities (rxe from Linux
	// 6.2, like atomic write) and a build with it (rdma-core 45 or later).
	nativeFlush := native && ibv.HaveWRFlush
	require.Equal(t, nativeFlush, p.NativeFlush(), "kernel %s, built with native flush: %v", rdmatest.Kernel(), ibv.HaveWRFlush)
	require.False(t, p.ODP())
	require.Same(t, dev, p.Device())

	const (
		msgAW    = "Native atomic write is not supported - ordinary RDMA write will be used instead."
		msgFlush = "Native flush is not supported - ordinary RDMA read will be used instead."
	)
	if native {
		require.NotContains(t, logged, msgAW)
	} else {
		require.Contains(t, logged, msgAW)
	}
	if nativeFlush {
		require.NotContains(t, logged, msgFlush)
	} else {
		require.Contains(t, logged, msgFlush)
	}
	t.Logf("logged at INFO: %q", logged)

	// Parents refuse to close before their children.
	e, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	err = p.Close()
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.ErrorIs(t, err, syscall.EBUSY)
	require.Contains(t, err.Error(), "1 object(s)")
	err = dev.Close()
	require.ErrorIs(t, err, syscall.EBUSY)
	require.Contains(t, err.Error(), "1 peer(s)")

	// The refused peer still works.
	e2, err := ep.Listen(p, ip, "0")
	require.NoError(t, err)
	require.NoError(t, e2.Close())

	require.NoError(t, e.Shutdown())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	_, err = ep.Listen(p, ip, "0")
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.ErrorIs(t, err, os.ErrClosed)
	require.NoError(t, dev.Close())
	_, err = peer.New(dev)
	require.ErrorIs(t, err, os.ErrClosed)
}

// TestIntegrationPeerConcurrent creates endpoints on one peer from several
// goroutines, while Close is tried concurrently.
func TestIntegrationPeerConcurrent(t *testing.T) {
	ip := rdmatest.IP(t)
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	require.NoError(t, err)
	p, err := peer.New(dev)
	require.NoError(t, err)

	const n = 8
	var wg sync.WaitGroup
	eps := make(chan *ep.Endpoint, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := ep.Listen(p, ip, "0")
			if err != nil {
				errs <- err
				return
			}
			eps <- e
		}()
	}
	wg.Wait()
	close(eps)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.ErrorIs(t, p.Close(), syscall.EBUSY)
	for e := range eps {
		wg.Add(1)
		go func() { defer wg.Done(); require.NoError(t, e.Close()) }()
	}
	wg.Wait()
	require.NoError(t, p.Close())
	require.NoError(t, dev.Close())
}
