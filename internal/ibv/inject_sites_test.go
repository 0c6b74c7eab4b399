//go:build rpma_inject && linux && cgo && !rpma_fake

package ibv_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/ibv"
)

var injectUse = regexp.MustCompile(`RPMA_INJECT\(([A-Z0-9_]+)\)`)

// siteIndex returns the index in ibv.InjectSites of the site called name.
func siteIndex(t *testing.T, name string) int {
	t.Helper()
	for i, s := range ibv.InjectSites() {
		if s.Name == name {
			return i
		}
	}
	t.Fatalf("no injection site %s", name)
	return -1
}

// TestInjectSitesUsedOnce checks the list of rpma_inject.h against the
// sources: every C site is used exactly once, every use is a listed site,
// and the list is in source order (files by name, then textual order).
func TestInjectSitesUsedOnce(t *testing.T) {
	require.True(t, ibv.InjectBuild)
	var files []string
	for _, pat := range []string{"*.go", "*.h"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	sort.Strings(files)
	var uses []string
	useCount := map[string]int{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range injectUse.FindAllStringSubmatch(string(b), -1) {
			uses = append(uses, m[1])
			useCount[m[1]]++
		}
	}
	require.Contains(t, files, "flush_native_linux.go", "the native-flush sites are counted too")

	var listed []string
	names := map[string]bool{}
	for _, s := range ibv.InjectSites() {
		require.False(t, names[s.Name], "site name %s is not unique", s.Name)
		names[s.Name] = true
		require.NotEmpty(t, s.Call, s.Name)
		if s.Go {
			require.Equal(t, ibv.InjectStyleGo, s.Style, s.Name)
			continue
		}
		require.NotEqual(t, ibv.InjectStyleGo, s.Style, s.Name)
		listed = append(listed, s.Name)
		require.Equal(t, 1, useCount[s.Name], "uses of site %s", s.Name)
	}
	for name := range useCount {
		require.Contains(t, listed, name, "RPMA_INJECT of an unlisted site")
	}
	require.Equal(t, listed, uses, "rpma_inject.h lists the sites in source order")
}

func TestInjectSiteList(t *testing.T) {
	sites := ibv.InjectSites()
	require.Len(t, ibv.InjectCounts(), len(sites))
	i := siteIndex(t, "POLL_CQ")
	require.Equal(t, "ibv_poll_cq", sites[i].Call)
	require.Equal(t, ibv.InjectStyleNeg, sites[i].Style)
	require.Equal(t, "neg", sites[i].Style.String())
	i = siteIndex(t, "GETADDRINFO")
	require.Equal(t, "eai", sites[i].Style.String())
	i = siteIndex(t, "CALLOC_WC")
	require.Equal(t, "calloc", sites[i].Call)
	require.Equal(t, ibv.InjectStyleNull, sites[i].Style)

	// The Go sites follow the C ones, in the order of the constants.
	first := firstGoSite(sites)
	require.Equal(t, ibv.GoSiteEpollArm+1, len(sites)-first, "one site per Go constant")
	for j := first; j < len(sites); j++ {
		require.True(t, sites[j].Go, sites[j].Name)
		require.Equal(t, "go", sites[j].Style.String())
	}
	require.False(t, sites[first-1].Go)
	require.Equal(t, "epoll_create1", sites[first+ibv.GoSiteEpollCreate1].Call)
	require.Equal(t, "mmap", sites[first+ibv.GoSiteMmap].Call)
	require.Equal(t, "eventfd", sites[first+ibv.GoSiteEventfd].Call)
}

// TestInjectDeviceNames arms the site of DeviceNames: the define of
// inject_linux.go's #cgo CFLAGS reaches device_linux.go's C code too.
func TestInjectDeviceNames(t *testing.T) {
	ibv.InjectReset()
	defer ibv.InjectReset()
	site := siteIndex(t, "GET_DEVICE_LIST")
	other := siteIndex(t, "GET_DEVICE_LIST_OPEN")

	// The real call: a host with rdma-core but no RDMA device lists none;
	// one without the uverbs ABI in sysfs fails with ENOSYS.
	_, realErr := ibv.DeviceNames()
	if realErr != nil {
		t.Logf("uninjected: %v", realErr)
		require.False(t, errors.Is(realErr, syscall.ENOMEM), "%v", realErr)
	}

	ibv.InjectReset()
	ibv.InjectArm(site, 1, syscall.ENOMEM)
	require.False(t, ibv.InjectFired())
	_, err := ibv.DeviceNames()
	require.Error(t, err)
	require.True(t, errors.Is(err, syscall.ENOMEM), "%v", err)
	require.Contains(t, err.Error(), "ibv_get_device_list")
	require.True(t, ibv.InjectFired())

	_, err = ibv.DeviceNames() // the 2nd occurrence is not armed
	require.Equal(t, realErr, err, "as the real call")
	c := ibv.InjectCounts()
	require.EqualValues(t, 2, c[site])
	require.EqualValues(t, 0, c[other])

	// Armed at OpenDevice's own site: DeviceNames does not touch it.
	ibv.InjectReset()
	ibv.InjectArm(other, 1, syscall.EIO)
	_, err = ibv.DeviceNames()
	require.Equal(t, realErr, err)
	require.False(t, ibv.InjectFired())
	_, err = ibv.OpenDevice("no-such-device")
	require.True(t, errors.Is(err, syscall.EIO), "%v", err)
	require.Contains(t, err.Error(), "ibv_get_device_list")
	require.True(t, ibv.InjectFired())
}

func TestInjectCreateEventChannel(t *testing.T) {
	ibv.InjectReset()
	defer ibv.InjectReset()
	live := ibv.LiveObjects()["rdma_event_channel"]
	ibv.InjectArm(siteIndex(t, "CREATE_EVENT_CHANNEL"), 1, syscall.EMFILE)
	_, err := ibv.CreateEventChannel()
	require.True(t, errors.Is(err, syscall.EMFILE), "%v", err)
	require.Contains(t, err.Error(), "rdma_create_event_channel")
	require.True(t, ibv.InjectFired())
	require.Equal(t, live, ibv.LiveObjects()["rdma_event_channel"])

	ch, err := ibv.CreateEventChannel()
	if err != nil {
		// No /dev/infiniband/rdma_cm on this host: the real call fails,
		// with an errno of its own.
		require.False(t, errors.Is(err, syscall.EMFILE), "%v", err)
		t.Logf("uninjected: %v", err)
		return
	}
	require.Equal(t, live+1, ibv.LiveObjects()["rdma_event_channel"])
	ch.Destroy()
	require.Equal(t, live, ibv.LiveObjects()["rdma_event_channel"])
}

func TestInjectGetAddrInfo(t *testing.T) {
	ibv.InjectReset()
	defer ibv.InjectReset()
	ibv.InjectArm(siteIndex(t, "GETADDRINFO"), 1, syscall.EADDRNOTAVAIL)
	_, err := ibv.GetAddrInfo("127.0.0.1", "7204", false)
	require.True(t, errors.Is(err, syscall.EADDRNOTAVAIL), "%v", err)
	require.Contains(t, err.Error(), "rdma_getaddrinfo")
	var ae *ibv.AddrInfoError
	require.False(t, errors.As(err, &ae), "an injected failure carries an errno")
	require.True(t, ibv.InjectFired())

	ai, err := ibv.GetAddrInfo("127.0.0.1", "7204", false)
	if err != nil {
		t.Logf("uninjected: %v", err) // a host without RDMA may refuse
		return
	}
	ai.Free()
}

func TestInjectNewWCBuf(t *testing.T) {
	ibv.InjectReset()
	defer ibv.InjectReset()
	site := siteIndex(t, "CALLOC_WC")
	ibv.InjectArm(site, 2, syscall.ENOMEM)
	b, err := ibv.NewWCBuf(4)
	require.NoError(t, err, "the 1st occurrence is not armed")
	_, err = ibv.NewWCBuf(4)
	require.True(t, errors.Is(err, syscall.ENOMEM), "%v", err)
	require.Contains(t, err.Error(), "calloc")
	require.True(t, ibv.InjectFired())
	require.EqualValues(t, 1, ibv.LiveObjects()["rpma_wc_buf"])
	b.Free()
	require.EqualValues(t, 2, ibv.InjectCounts()[site])
}

func TestInjectGoKth(t *testing.T) {
	ibv.InjectReset()
	defer ibv.InjectReset()
	sites := ibv.InjectSites()
	site := firstGoSite(sites) + ibv.GoSiteEventfd
	require.Equal(t, "eventfd", sites[site].Call)

	ibv.InjectArm(site, 3, syscall.EMFILE)
	require.Zero(t, ibv.InjectGo(ibv.GoSiteEventfd))
	require.Zero(t, ibv.InjectGo(ibv.GoSiteEventfd))
	require.Zero(t, ibv.InjectGo(ibv.GoSiteMmap))
	require.False(t, ibv.InjectFired())
	require.Equal(t, syscall.EMFILE, ibv.InjectGo(ibv.GoSiteEventfd))
	require.True(t, ibv.InjectFired())
	require.Zero(t, ibv.InjectGo(ibv.GoSiteEventfd), "only the k-th occurrence fails")
	c := ibv.InjectCounts()
	require.EqualValues(t, 4, c[site])
	require.EqualValues(t, 1, c[firstGoSite(sites)+ibv.GoSiteMmap])

	ibv.InjectDisarm()
	require.True(t, ibv.InjectFired(), "disarming keeps the record")
	ibv.InjectReset()
	require.False(t, ibv.InjectFired())
	for i, n := range ibv.InjectCounts() {
		require.Zero(t, n, sites[i].Name)
	}

	// Re-armed after a reset, the count starts again from 1.
	ibv.InjectArm(site, 1, syscall.ENFILE)
	require.Equal(t, syscall.ENFILE, ibv.InjectGo(ibv.GoSiteEventfd))
}

// firstGoSite is the index of the first Go site of sites (they follow the
// C ones).
func firstGoSite(sites []ibv.InjectSite) int {
	for i, s := range sites {
		if s.Go {
			return i
		}
	}
	return len(sites)
}
