//go:build rpma_fake && linux

package ibv

import (
	"sync"
	"syscall"
)

// Fault injection in the fake build: the sites of rpma_inject.h (same
// names, order and styles), armed with the API of inject_linux.go; the
// fake's call of each site fails as the provider's would.

// InjectBuild reports whether this build has fault injection: the fake
// build has.
const InjectBuild = true

// The C sites, in the order of rpma_inject.h.
const (
	siteGetAsyncEvent = iota
	siteGetCMEvent
	siteAckCMEvent
	siteGetAddrInfo
	siteResolveAddr
	siteBindAddr
	siteAccept
	siteConnect
	siteCreateQP
	siteCreateEventChannel
	siteCreateID
	siteResolveRoute
	siteListen
	siteReject
	siteSetOption
	siteDisconnect
	siteNotify
	siteMigrateID
	siteDestroyID
	siteRegMR
	siteAdviseMR
	sitePostSend
	sitePostSendWriteRead
	sitePostSendBatch
	sitePostSendInline8
	siteWrCompleteAtomicWrite
	sitePostSendAtomic
	sitePostRecv
	sitePostSRQRecv
	siteQueryQP
	siteModifyQP
	siteCreateSRQ
	siteDeregMR
	siteDestroySRQ
	siteResizeCQ
	siteQueryDeviceEx
	siteQueryPort
	siteGetDeviceList
	siteGetDeviceListOpen
	siteOpenDevice
	siteCloseDevice
	siteWrCompleteFlush
	siteWrCompleteWriteFlush
	siteAllocMW
	sitePostSendBindMW
	siteDeallocMW
	sitePollCQ
	siteAllocPD
	siteCallocWC
	siteGetCQEvent
	siteReqNotifyCQRearm
	siteDeallocPD
	siteCreateCompChannel
	siteDestroyCompChannel
	siteCreateCQ
	siteReqNotifyCQ
	siteDestroyCQ
	cSiteCount
)

var cSites = [cSiteCount]InjectSite{
	siteGetAsyncEvent:         {Name: "GET_ASYNC_EVENT", Call: "ibv_get_async_event", Style: InjectStyleMinus1},
	siteGetCMEvent:            {Name: "GET_CM_EVENT", Call: "rdma_get_cm_event", Style: InjectStyleMinus1},
	siteAckCMEvent:            {Name: "ACK_CM_EVENT", Call: "rdma_ack_cm_event", Style: InjectStyleMinus1},
	siteGetAddrInfo:           {Name: "GETADDRINFO", Call: "rdma_getaddrinfo", Style: InjectStyleEAI},
	siteResolveAddr:           {Name: "RESOLVE_ADDR", Call: "rdma_resolve_addr", Style: InjectStyleMinus1},
	siteBindAddr:              {Name: "BIND_ADDR", Call: "rdma_bind_addr", Style: InjectStyleMinus1},
	siteAccept:                {Name: "ACCEPT", Call: "rdma_accept", Style: InjectStyleMinus1},
	siteConnect:               {Name: "CONNECT", Call: "rdma_connect", Style: InjectStyleMinus1},
	siteCreateQP:              {Name: "CREATE_QP", Call: "rdma_create_qp_ex", Style: InjectStyleMinus1},
	siteCreateEventChannel:    {Name: "CREATE_EVENT_CHANNEL", Call: "rdma_create_event_channel", Style: InjectStyleNull},
	siteCreateID:              {Name: "CREATE_ID", Call: "rdma_create_id", Style: InjectStyleMinus1},
	siteResolveRoute:          {Name: "RESOLVE_ROUTE", Call: "rdma_resolve_route", Style: InjectStyleMinus1},
	siteListen:                {Name: "LISTEN", Call: "rdma_listen", Style: InjectStyleMinus1},
	siteReject:                {Name: "REJECT", Call: "rdma_reject", Style: InjectStyleMinus1},
	siteSetOption:             {Name: "SET_OPTION", Call: "rdma_set_option", Style: InjectStyleMinus1},
	siteDisconnect:            {Name: "DISCONNECT", Call: "rdma_disconnect", Style: InjectStyleMinus1},
	siteNotify:                {Name: "NOTIFY", Call: "rdma_notify", Style: InjectStyleMinus1},
	siteMigrateID:             {Name: "MIGRATE_ID", Call: "rdma_migrate_id", Style: InjectStyleMinus1},
	siteDestroyID:             {Name: "DESTROY_ID", Call: "rdma_destroy_id", Style: InjectStyleMinus1},
	siteRegMR:                 {Name: "REG_MR", Call: "ibv_reg_mr", Style: InjectStyleNull},
	siteAdviseMR:              {Name: "ADVISE_MR", Call: "ibv_advise_mr", Style: InjectStyleRet},
	sitePostSend:              {Name: "POST_SEND", Call: "ibv_post_send", Style: InjectStyleRet},
	sitePostSendWriteRead:     {Name: "POST_SEND_WRITE_READ", Call: "ibv_post_send", Style: InjectStyleRet},
	sitePostSendBatch:         {Name: "POST_SEND_BATCH", Call: "ibv_post_send", Style: InjectStyleRet},
	sitePostSendInline8:       {Name: "POST_SEND_INLINE8", Call: "ibv_post_send", Style: InjectStyleRet},
	siteWrCompleteAtomicWrite: {Name: "WR_COMPLETE_ATOMIC_WRITE", Call: "ibv_wr_complete", Style: InjectStyleRet},
	sitePostSendAtomic:        {Name: "POST_SEND_ATOMIC", Call: "ibv_post_send", Style: InjectStyleRet},
	sitePostRecv:              {Name: "POST_RECV", Call: "ibv_post_recv", Style: InjectStyleRet},
	sitePostSRQRecv:           {Name: "POST_SRQ_RECV", Call: "ibv_post_srq_recv", Style: InjectStyleRet},
	siteQueryQP:               {Name: "QUERY_QP", Call: "ibv_query_qp", Style: InjectStyleRet},
	siteModifyQP:              {Name: "MODIFY_QP", Call: "ibv_modify_qp", Style: InjectStyleRet},
	siteCreateSRQ:             {Name: "CREATE_SRQ", Call: "ibv_create_srq", Style: InjectStyleNull},
	siteDeregMR:               {Name: "DEREG_MR", Call: "ibv_dereg_mr", Style: InjectStyleRet},
	siteDestroySRQ:            {Name: "DESTROY_SRQ", Call: "ibv_destroy_srq", Style: InjectStyleRet},
	siteResizeCQ:              {Name: "RESIZE_CQ", Call: "ibv_resize_cq", Style: InjectStyleRet},
	siteQueryDeviceEx:         {Name: "QUERY_DEVICE_EX", Call: "ibv_query_device_ex", Style: InjectStyleRet},
	siteQueryPort:             {Name: "QUERY_PORT", Call: "ibv_query_port", Style: InjectStyleRet},
	siteGetDeviceList:         {Name: "GET_DEVICE_LIST", Call: "ibv_get_device_list", Style: InjectStyleNull},
	siteGetDeviceListOpen:     {Name: "GET_DEVICE_LIST_OPEN", Call: "ibv_get_device_list", Style: InjectStyleNull},
	siteOpenDevice:            {Name: "OPEN_DEVICE", Call: "ibv_open_device", Style: InjectStyleNull},
	siteCloseDevice:           {Name: "CLOSE_DEVICE", Call: "ibv_close_device", Style: InjectStyleMinus1},
	siteWrCompleteFlush:       {Name: "WR_COMPLETE_FLUSH", Call: "ibv_wr_complete", Style: InjectStyleRet},
	siteWrCompleteWriteFlush:  {Name: "WR_COMPLETE_WRITE_FLUSH", Call: "ibv_wr_complete", Style: InjectStyleRet},
	siteAllocMW:               {Name: "ALLOC_MW", Call: "ibv_alloc_mw", Style: InjectStyleNull},
	sitePostSendBindMW:        {Name: "POST_SEND_BIND_MW", Call: "ibv_post_send", Style: InjectStyleRet},
	siteDeallocMW:             {Name: "DEALLOC_MW", Call: "ibv_dealloc_mw", Style: InjectStyleRet},
	sitePollCQ:                {Name: "POLL_CQ", Call: "ibv_poll_cq", Style: InjectStyleNeg},
	siteAllocPD:               {Name: "ALLOC_PD", Call: "ibv_alloc_pd", Style: InjectStyleNull},
	siteCallocWC:              {Name: "CALLOC_WC", Call: "calloc", Style: InjectStyleNull},
	siteGetCQEvent:            {Name: "GET_CQ_EVENT", Call: "ibv_get_cq_event", Style: InjectStyleMinus1},
	siteReqNotifyCQRearm:      {Name: "REQ_NOTIFY_CQ_REARM", Call: "ibv_req_notify_cq", Style: InjectStyleRet},
	siteDeallocPD:             {Name: "DEALLOC_PD", Call: "ibv_dealloc_pd", Style: InjectStyleRet},
	siteCreateCompChannel:     {Name: "CREATE_COMP_CHANNEL", Call: "ibv_create_comp_channel", Style: InjectStyleNull},
	siteDestroyCompChannel:    {Name: "DESTROY_COMP_CHANNEL", Call: "ibv_destroy_comp_channel", Style: InjectStyleRet},
	siteCreateCQ:              {Name: "CREATE_CQ", Call: "ibv_create_cq", Style: InjectStyleNull},
	siteReqNotifyCQ:           {Name: "REQ_NOTIFY_CQ", Call: "ibv_req_notify_cq", Style: InjectStyleRet},
	siteDestroyCQ:             {Name: "DESTROY_CQ", Call: "ibv_destroy_cq", Style: InjectStyleRet},
}

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

var injectStyleNames = [...]string{"ret", "null", "minus1", "neg", "eai", "go"}

// String returns the style's name.
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

const injectAll = int(cSiteCount) + goSiteCount

var inj struct {
	mu     sync.Mutex
	counts [injectAll]int64
	site   int // armed site, -1 none
	k      int64
	errno  syscall.Errno
	fired  bool
}

func init() { inj.site = -1 }

// InjectSites returns every site: the C sites, then the Go sites.
func InjectSites() []InjectSite {
	sites := make([]InjectSite, 0, injectAll)
	sites = append(sites, cSites[:]...)
	for _, s := range goSites {
		s.Style, s.Go = InjectStyleGo, true
		sites = append(sites, s)
	}
	return sites
}

// InjectArm arms site: its k-th occurrence (1-based) since the last
// InjectReset fails with errno.
func InjectArm(site int, k int64, errno syscall.Errno) {
	if site < 0 || site >= injectAll {
		panic("ibv: InjectArm of an unknown site")
	}
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.site, inj.k, inj.errno, inj.fired = site, k, errno, false
}

// InjectDisarm disarms: no site fails. Counting goes on.
func InjectDisarm() {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.site = -1
}

// InjectFired reports whether the armed site has failed since it was
// armed.
func InjectFired() bool {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	return inj.fired
}

// InjectCounts returns how many times each site occurred since the last
// InjectReset.
func InjectCounts() []int64 {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	return append([]int64(nil), inj.counts[:]...)
}

// InjectReset zeroes the counts, disarms and clears InjectFired.
func InjectReset() {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.counts = [injectAll]int64{}
	inj.site, inj.fired = -1, false
}

// injectHit counts an occurrence of site and returns the errno it must
// fail with (0: none).
func injectHit(site int) syscall.Errno {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.counts[site]++
	if site == inj.site && inj.counts[site] == inj.k {
		inj.fired = true
		if inj.errno == 0 {
			return syscall.EIO
		}
		return inj.errno
	}
	return 0
}

// InjectGo counts an occurrence of Go site site and returns the errno it
// must fail with.
func InjectGo(site int) syscall.Errno {
	if site < 0 || site >= goSiteCount {
		return 0
	}
	return injectHit(int(cSiteCount) + site)
}
