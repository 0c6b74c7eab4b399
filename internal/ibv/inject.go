package ibv

// The Go sites of fault injection: the failing libc calls that
// internal/core makes from Go. Each is one textual call, guarded by
//
//	if e := ibv.InjectGo(ibv.GoSiteEpollCtl); e != 0 { /* fail with e */ }
//
// In a build with the tag rpma_inject they are counted and armed like the
// C sites, after them in InjectSites' numbering; in any other build
// InjectGo is the constant 0.
const (
	GoSiteEpollCreate1     = iota // epoll_create1
	GoSiteEpollCtl                // epoll_ctl
	GoSiteFcntlWatched            // fcntl of a watched fd
	GoSiteFcntlEpoll              // fcntl of the epoll fd
	GoSiteEventfd                 // eventfd
	GoSiteFcntlNonblockDup        // fcntl setting O_NONBLOCK on a dup
	GoSiteFcntlDupfd              // fcntl F_DUPFD_CLOEXEC
	GoSiteMmap                    // mmap
	GoSiteEpollArm                // epoll_ctl arming a completion wait's gate
	goSiteCount
)
