//go:build rpma_inject && linux && cgo && !rpma_fake

package ibv

/*
#cgo CFLAGS: -DRPMA_INJECT
#include <stdint.h>
#include "rpma_inject.h"

// The Go sites (inject.go) follow the C ones in the numbering.
#define RPMA_INJECT_GO_SITES 9
#define RPMA_INJECT_ALL (RPMA_SITE_COUNT + RPMA_INJECT_GO_SITES)

static int64_t rpma_inject_counts[RPMA_INJECT_ALL];
static int rpma_inject_site = -1; // the armed site, -1: none
static int64_t rpma_inject_k;     // its occurrence that fails (1-based)
static int rpma_inject_errno;     // the errno it fails with
static int rpma_inject_fired;

// rpma_inject_hit counts an occurrence of site and returns the errno it
// must fail with: that of the arming for the armed site's k-th
// occurrence since the last reset, 0 for every other.
int rpma_inject_hit(int site) {
	if (site < 0 || site >= RPMA_INJECT_ALL)
		return 0;
	int64_t n = __atomic_add_fetch(&rpma_inject_counts[site], 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rpma_inject_site, __ATOMIC_ACQUIRE) != site)
		return 0;
	if (n != __atomic_load_n(&rpma_inject_k, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&rpma_inject_fired, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&rpma_inject_errno, __ATOMIC_RELAXED);
}

static void rpma_inject_arm(int site, int64_t k, int e) {
	__atomic_store_n(&rpma_inject_site, -1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&rpma_inject_k, k, __ATOMIC_RELAXED);
	__atomic_store_n(&rpma_inject_errno, e, __ATOMIC_RELAXED);
	__atomic_store_n(&rpma_inject_fired, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&rpma_inject_site, site, __ATOMIC_RELEASE);
}

static void rpma_inject_disarm(void) {
	__atomic_store_n(&rpma_inject_site, -1, __ATOMIC_SEQ_CST);
}

static int rpma_inject_was_fired(void) {
	return __atomic_load_n(&rpma_inject_fired, __ATOMIC_SEQ_CST);
}

static int64_t rpma_inject_count(int site) {
	return __atomic_load_n(&rpma_inject_counts[site], __ATOMIC_SEQ_CST);
}

static void rpma_inject_reset(void) {
	rpma_inject_disarm();
	for (int i = 0; i < RPMA_INJECT_ALL; i++)
		__atomic_store_n(&rpma_inject_counts[i], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&rpma_inject_fired, 0, __ATOMIC_SEQ_CST);
}

// rpma_inject_site_info gives the name, call and style of C site site,
// from the list in rpma_inject.h.
#define RPMA_SITE_NAME_(name, call, style) #name,
#define RPMA_SITE_CALL_(name, call, style) call,
#define RPMA_SITE_STYLE_(name, call, style) style,
static const char *const rpma_site_names[] = { RPMA_SITES(RPMA_SITE_NAME_) };
static const char *const rpma_site_calls[] = { RPMA_SITES(RPMA_SITE_CALL_) };
static const int rpma_site_styles[] = { RPMA_SITES(RPMA_SITE_STYLE_) };

static void rpma_inject_site_info(int site, const char **name, const char **call, int *style) {
	*name = rpma_site_names[site];
	*call = rpma_site_calls[site];
	*style = rpma_site_styles[site];
}
*/
import "C"

import (
	"syscall"
)

// InjectBuild reports whether this build has fault injection (the build
// tag rpma_inject, on Linux with cgo). It has.
const InjectBuild = true

// InjectStyle is how a site fails when injected.
type InjectStyle int

// The styles (the RPMA_FAIL_* of rpma_inject.h, then InjectStyleGo).
const (
	InjectStyleRet    InjectStyle = iota // the call returns the errno
	InjectStyleNull                      // the call returns NULL and sets errno
	InjectStyleMinus1                    // the call returns -1 and sets errno
	InjectStyleNeg                       // the call returns a negative value, no errno (ibv_poll_cq)
	InjectStyleEAI                       // rdma_getaddrinfo: returns -1 and sets errno
	InjectStyleGo                        // a libc call made from Go (InjectGo)
)

// Compile-time checks of the styles and the Go sites against the header.
var (
	_ [0]struct{} = [C.RPMA_FAIL_RET - InjectStyleRet]struct{}{}
	_ [0]struct{} = [C.RPMA_FAIL_NULL - InjectStyleNull]struct{}{}
	_ [0]struct{} = [C.RPMA_FAIL_MINUS1 - InjectStyleMinus1]struct{}{}
	_ [0]struct{} = [C.RPMA_FAIL_NEG - InjectStyleNeg]struct{}{}
	_ [0]struct{} = [C.RPMA_FAIL_EAI - InjectStyleEAI]struct{}{}
	_ [0]struct{} = [C.RPMA_INJECT_GO_SITES - goSiteCount]struct{}{}
	_ [0]struct{} = [goSiteCount - C.RPMA_INJECT_GO_SITES]struct{}{}
)

var injectStyleNames = [...]string{"ret", "null", "minus1", "neg", "eai", "go"}

// String returns the style's name: "ret", "null", "minus1", "neg", "eai"
// or "go".
func (s InjectStyle) String() string {
	if s < 0 || int(s) >= len(injectStyleNames) {
		return "InjectStyle(?)"
	}
	return injectStyleNames[s]
}

// InjectSite describes a fault-injection site.
type InjectSite struct {
	Name  string      // the site's name, e.g. "POST_SEND_INLINE8"
	Call  string      // the C function whose failure it stands for
	Style InjectStyle // how it fails
	Go    bool        // whether it is a Go site (InjectGo)
}

// goSites are the Go sites, indexed by the GoSite constants.
var goSites = [goSiteCount]InjectSite{
	GoSiteEpollCreate1:     {Name: "EPOLL_CREATE1", Call: "epoll_create1"},
	GoSiteEpollCtl:         {Name: "EPOLL_CTL", Call: "epoll_ctl"},
	GoSiteFcntlWatched:     {Name: "FCNTL_WATCHED", Call: "fcntl"},
	GoSiteFcntlEpoll:       {Name: "FCNTL_EPOLL", Call: "fcntl"},
	GoSiteEventfd:          {Name: "EVENTFD", Call: "eventfd"},
	GoSiteFcntlNonblockDup: {Name: "FCNTL_NONBLOCK_DUP", Call: "fcntl"},
	GoSiteFcntlDupfd:       {Name: "FCNTL_DUPFD", Call: "fcntl"},
	GoSiteMmap:             {Name: "MMAP", Call: "mmap"},
	GoSiteEpollArm:         {Name: "EPOLL_ARM", Call: "epoll_ctl"},
}

// InjectSites returns every site: the C sites in the order of
// rpma_inject.h, then the Go sites in the order of the GoSite constants.
// Its indexes are the sites of InjectArm and InjectCounts.
func InjectSites() []InjectSite {
	sites := make([]InjectSite, 0, C.RPMA_SITE_COUNT+goSiteCount)
	for i := 0; i < C.RPMA_SITE_COUNT; i++ {
		var name, call *C.char
		var style C.int
		C.rpma_inject_site_info(C.int(i), &name, &call, &style)
		sites = append(sites, InjectSite{Name: C.GoString(name), Call: C.GoString(call), Style: InjectStyle(style)})
	}
	for _, s := range goSites {
		s.Style, s.Go = InjectStyleGo, true
		sites = append(sites, s)
	}
	return sites
}

// InjectArm arms site (an index of InjectSites): its k-th occurrence
// (1-based) since the last InjectReset fails with errno; every other
// occurrence of every site proceeds. It replaces the previous arming and
// clears InjectFired.
func InjectArm(site int, k int64, errno syscall.Errno) {
	if site < 0 || site >= C.RPMA_INJECT_ALL {
		panic("ibv: InjectArm of an unknown site")
	}
	C.rpma_inject_arm(C.int(site), C.int64_t(k), C.int(errno))
}

// InjectDisarm disarms: no site fails. Counting goes on.
func InjectDisarm() { C.rpma_inject_disarm() }

// InjectFired reports whether the armed site has failed since it was
// armed.
func InjectFired() bool { return C.rpma_inject_was_fired() != 0 }

// InjectCounts returns how many times each site (same indexing as
// InjectSites) occurred since the last InjectReset.
func InjectCounts() []int64 {
	n := make([]int64, C.RPMA_INJECT_ALL)
	for i := range n {
		n[i] = int64(C.rpma_inject_count(C.int(i)))
	}
	return n
}

// InjectReset zeroes the counts, disarms and clears InjectFired.
func InjectReset() { C.rpma_inject_reset() }

// InjectGo counts an occurrence of Go site site (a GoSite constant) and
// returns the errno it must fail with: that of the arming at the armed
// occurrence, else 0.
func InjectGo(site int) syscall.Errno {
	if site < 0 || site >= goSiteCount {
		return 0
	}
	return syscall.Errno(C.rpma_inject_hit(C.int(C.RPMA_SITE_COUNT + site)))
}
