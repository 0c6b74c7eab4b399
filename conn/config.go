package conn

import (
	"strconv"
	"time"

	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/srq"
)

// Config mirrors struct rpma_conn_cfg: how a connection request is built.
// A zero field means that field's default, so a literal names only the
// fields it cares about (&Config{PeerTimeout: time.Second} is librpma's
// defaults with a peer timeout), the zero Config and a nil *Config mean
// [DefaultConfig], librpma's defaults. A zero that is a setting of its own
// has a name instead: [NoQueue] for a send or receive queue of size 0,
// [NoRetries] for a retry count of 0. [DefaultConfig] returns the defaults
// filled in, for code that reads or adjusts them.
//
// Validation happens before anything reaches the verbs layer; out-of-range
// values (negative ones other than NoQueue and NoRetries among them) give
// an error matching [rpma.ErrInvalidArgument] that names the field. Sizes
// are also checked against the device's limits (max_cqe, max_qp_wr) when
// the request is built.
type Config struct {
	// Timeout bounds the address and route resolution of an outgoing
	// request (rdma_resolve_addr, rdma_resolve_route), each. 0 means the
	// default, 1000 ms; otherwise it must be at least 1 ms and at most
	// MaxInt32 ms, and is used in whole milliseconds.
	Timeout time.Duration
	// CQSize is the number of entries of the main CQ. 0 means the
	// default, 10; there is always a main CQ.
	CQSize int
	// RCQSize is the number of entries of the receive CQ. 0, the
	// default, means no receive CQ, as in librpma: receive completions
	// then go to the main CQ. [NoQueue] says the same explicitly.
	RCQSize int
	// SQSize is the number of work requests the send queue holds. 0
	// means the default, 10; [NoQueue] asks for a send queue of size 0
	// (a QP that never sends; librpma's 0).
	SQSize int
	// RQSize is the number of work requests the receive queue holds. 0
	// means the default, 10; [NoQueue] asks for a receive queue of size
	// 0 (a QP that never receives; librpma's 0).
	RQSize int
	// SharedCompChannel makes the main CQ and the receive CQ share one
	// completion channel (rpma_conn_cfg_set_compl_channel). Default false.
	SharedCompChannel bool
	// RetryCount is the transport retry count of the connection's QP
	// (rdma_conn_param.retry_count, 0 to 7): how many times a request
	// that gets no acknowledgement is resent before its work completion
	// fails with IBV_WC_RETRY_EXC_ERR. 0 means the default, 7,
	// librpma's value; [NoRetries] asks for 0 retries. Ignored when
	// accepting (the accepting side's QP takes the
	// connecting side's value).
	//
	// A request to a host that vanished (no disconnect) fails after
	// RetryCount+1 ACK timeouts: on rxe, measured between two VMs, 0.56 s
	// for NoRetries, 1.6 s for 2 and 3.8 s for 6 on kernel 6.12 (an ACK
	// timeout of about 0.54 s), 2.2 s for NoRetries and 16 s for 6 on 6.1
	// (about 2.2 s). With 7 rxe retries for ever (it never decrements a
	// count of 7), so nothing ever fails: set 1 to 6 on the connecting
	// side to have
	// requests to a dead peer fail. A side with nothing outstanding,
	// and the accepting side, whose count is not its own, need
	// PeerTimeout. doc/failures.md has the measurements.
	RetryCount int
	// RNRRetryCount is the receiver-not-ready retry count
	// (rdma_conn_param.rnr_retry_count, 0 to 7; 7 means retry forever)
	// that this side asks of the other side: rdma_cm carries it in the
	// handshake, and it bounds how many times the OTHER side's sends
	// are retried while this side has no receive posted (rdma_connect(3)).
	// It does not bound this side's own sends: the other side's value
	// does, and PeerTimeout does whatever that is (a send retried for
	// ever gets no completion, so the connection is lost after
	// PeerTimeout). Measured on rxe, kernels 6.12 and 6.1: a sender with
	// 2 against a receiver with the default retried for ever (nothing in
	// 10 s); a receiver with 2 made the other side's send fail with
	// IBV_WC_RNR_RETRY_EXC_ERR in 1.35 s. 0 means the default, 7,
	// librpma's value; [NoRetries] asks for 0 retries (a send from the
	// other side that finds no receive posted here then fails at once).
	RNRRetryCount int
	// PeerTimeout, when not 0, makes the library report the connection
	// lost when the other side has not answered for that long (a Go
	// addition: librpma has nothing like it; 0, the default, is its
	// behaviour). With requests outstanding, no completion for
	// PeerTimeout ends the connection; an idle connection is probed (a
	// zero-length RDMA write, with a send-queue slot and a CQ entry of its
	// own, whose completion the caller never sees). The connection is
	// then lost: outstanding requests complete with flush errors, posts
	// return an error matching rpma.ErrConnBroken and
	// rpma.ErrPeerTimeout, waits return a *rpma.ConnEventError (LOST) and
	// NextEvent returns rpma.ConnLost. It is reported between PeerTimeout
	// and 1.5 × PeerTimeout after the last sign of the other side. A send
	// that waits longer than PeerTimeout for the other side to post a
	// receive (receiver not ready) counts as no answer too, and so does a
	// single operation that takes longer than PeerTimeout. Out of range
	// (other than 0: [MinPeerTimeout, MaxPeerTimeout]) is an invalid
	// argument. It is local: each side sets its own. On an idle
	// connection the probes' completions wake completion waits about
	// four times per PeerTimeout (spurious wake-ups: nothing to poll). A
	// probe that fails (its retries exhausted, or flushed, as rxe flushes
	// a QP whose request it cannot send while its link is down) reports
	// the connection lost at once, its cause the probe's *rpma.WCError;
	// so does a probe the provider refuses to post (other than for a
	// full queue, which the next tick retries), its cause
	// ibv_post_send's error.
	PeerTimeout time.Duration
	// AckTimeout, when not 0, sets the local ACK timeout of the
	// connection's QP (rdma_set_option with RDMA_OPTION_ID_ACK_TIMEOUT,
	// a Go addition: librpma leaves it to rdma_cm): how long a request
	// waits for its acknowledgement before it is resent, rounded up to
	// 4.096 µs × 2^k (k from 1 to 31; [MinAckTimeout, MaxAckTimeout]).
	// Unlike RetryCount it also applies when accepting: each side times
	// out its own requests. A request to a vanished host fails after
	// about (RetryCount+1) × AckTimeout; rxe counts in scheduler ticks
	// (at least one, 4 ms at 250 Hz). 0 (the default) keeps rdma_cm's,
	// which on rxe is about 0.54 s on kernel 6.12 and 2.2 s on 6.1.
	AckTimeout time.Duration
	// EstablishTimeout bounds how long a connection accepted with this
	// Config (conn.ConnReq.Connect on a request from an endpoint) may
	// take to be established: if its ESTABLISHED event has not come by
	// then, it is lost, as for PeerTimeout: NextEvent returns
	// rpma.ConnLost, waits return a *rpma.ConnEventError (LOST) whose
	// cause names the bound and matches rpma.ErrPeerTimeout, and
	// Close releases everything it held. It catches a client that
	// connects and never completes the handshake (it never reads its
	// events, or it vanished after its request): rdma_cm then gives the
	// accepting side no event at all, and librpma waits for ever. 0
	// means PeerTimeout when that is set, else
	// [DefaultEstablishTimeout], 30 s (handshakes in a 300-client storm
	// on rxe took up to 13 s; Linux bounds a half-open TCP handshake at
	// about 60 s); [NoEstablishTimeout] asks for no bound (librpma's
	// behaviour). Otherwise it must be in [MinPeerTimeout,
	// MaxPeerTimeout]. A connecting side is not bounded by it: its
	// handshake is rdma_cm's, and its wait for ESTABLISHED (NextEvent)
	// ends with that wait's ctx. The
	// endpoint can also cap how many accepted connections are not
	// established yet (ep.Config.MaxEstablishing).
	EstablishTimeout time.Duration
	// WaitMode says how the connection's completion waits block: the
	// mirror's (CQ.Wait, Conn.Wait) and the waiting calls' (Write,
	// WriteAndPersist, ...) alike. [WaitPoller], the zero value and the
	// default, parks waiting goroutines in Go's runtime poller, holding
	// no thread. [WaitThread] (a Go addition) blocks the thread of the
	// goroutine whose turn it is to wait in epoll_wait(2) on the
	// completion channel, the connection's events and a cancellation fd,
	// so that a completion event wakes that thread directly, as a
	// blocking rpma_cq_wait does, instead of the runtime's poller thread
	// first: fewer system calls and wake-ups per waited operation, for a
	// blocked thread per connection whose completions are waited for.
	// The other waiting goroutines of the connection wait on channels, in
	// either mode. Contexts, deadlines and Close end a wait the same way
	// in both. CQ.FD and CQ.TryWait are unaffected. A value other than
	// the two is an invalid argument.
	WaitMode WaitMode
	// SpinLimit (a Go addition) bounds how long a completion wait that
	// finds nothing polls the CQ before it parks, in either WaitMode:
	// the mirror's (CQ.Wait) and the waiting calls' alike. Where the
	// completion comes within it (a NIC: a few microseconds), the wait
	// costs no system call and no wake-up. The spin adapts: it doubles
	// (up to SpinLimit) when it catches its completion, halves when it
	// finds nothing, down to off, and is tried again after 64 waits that
	// parked; while it is on, the CQ is armed only just before a wait
	// parks (CQ.FD and CQ.TryWait keep it armed for good). There is no
	// spin with one CPU (GOMAXPROCS or the machine), nor on a
	// SharedCompChannel. 0 means [DefaultSpinLimit], 50 µs; [NoSpin]
	// turns it off (every wait that finds nothing parks, as
	// rpma_cq_wait does); otherwise at most [MaxSpinLimit], 1 ms.
	SpinLimit time.Duration
	// SRQ makes the connection receive through a shared receive queue
	// (rpma_conn_cfg_set_srq): its receives are posted with
	// srq.SRQ.Recv, not Conn.Recv, and complete on the SRQ's receive CQ
	// if it has one, else on the connection's receive CQ (or main CQ).
	// RQSize is then unused. Default nil. An SRQ with a receive CQ
	// cannot be combined with SharedCompChannel (an invalid argument, as
	// in librpma). The SRQ refuses to close while the connection is open.
	SRQ *srq.SRQ
}

// WaitMode says how a connection's completion waits block
// (Config.WaitMode).
type WaitMode int

// The wait modes.
const (
	// WaitPoller parks waiting goroutines in Go's runtime poller: the
	// default.
	WaitPoller = WaitMode(core.WaitPoller)
	// WaitThread blocks a waiting goroutine's thread in epoll_wait(2).
	WaitThread = WaitMode(core.WaitThread)
)

// String returns the mode's name.
func (m WaitMode) String() string {
	switch m {
	case WaitPoller:
		return "WaitPoller"
	case WaitThread:
		return "WaitThread"
	}
	return "WaitMode(" + strconv.Itoa(int(m)) + ")"
}

// Defaults and limits of Config and of private data.
const (
	DefaultTimeout       = core.DefaultTimeout
	DefaultCQSize        = core.DefaultCQSize
	DefaultRCQSize       = core.DefaultRCQSize
	DefaultSQSize        = core.DefaultSQSize
	DefaultRQSize        = core.DefaultRQSize
	DefaultRetryCount    = core.DefaultRetryCount
	DefaultRNRRetryCount = core.DefaultRNRRetryCount
	// DefaultEstablishTimeout is the bound of an accepted connection's
	// handshake when neither EstablishTimeout nor PeerTimeout is set.
	DefaultEstablishTimeout = core.DefaultEstablishTimeout

	// The range of a PeerTimeout that is not 0.
	MinPeerTimeout = core.MinPeerTimeout
	MaxPeerTimeout = core.MaxPeerTimeout

	// The range of an AckTimeout that is not 0.
	MinAckTimeout = core.MinAckTimeout
	MaxAckTimeout = core.MaxAckTimeout

	// NoQueue, as SQSize or RQSize, asks for a queue of size 0 (a zero
	// field means the default); as RCQSize, for no receive CQ, as 0 does.
	NoQueue = core.NoQueue
	// NoRetries, as RetryCount or RNRRetryCount, asks for 0 retries (a
	// zero field means the default).
	NoRetries = core.NoRetries
	// NoEstablishTimeout, as EstablishTimeout, leaves an accepted
	// connection unbounded until it is established (librpma's
	// behaviour; a zero field means the default).
	NoEstablishTimeout = core.NoEstablishTimeout

	// DefaultSpinLimit is a completion wait's spin when SpinLimit is 0.
	DefaultSpinLimit = core.DefaultSpinLimit
	// MaxSpinLimit bounds a SpinLimit.
	MaxSpinLimit = core.MaxSpinLimit
	// NoSpin, as SpinLimit, turns the spin before a park off.
	NoSpin = core.NoSpin

	// MaxConnectPrivateData is the most private data ConnReq.Connect
	// sends from the connecting side (rdma_cm over IB CM, RDMA_PS_TCP).
	MaxConnectPrivateData = core.MaxConnectPrivateData
	// MaxAcceptPrivateData is the most private data ConnReq.Connect
	// sends when accepting.
	MaxAcceptPrivateData = core.MaxAcceptPrivateData
)

// DefaultConfig mirrors rpma_conn_cfg_new: a new Config with librpma's
// defaults filled in: Timeout 1000 ms, CQSize 10, RCQSize 0, SQSize 10,
// RQSize 10, SharedCompChannel false, RetryCount 7, RNRRetryCount 7, no
// SRQ. It means what &Config{} and a nil *Config mean; it is for code
// that reads the defaults or adjusts them.
func DefaultConfig() *Config {
	p := core.DefaultConnParams()
	return &Config{
		Timeout:           p.Timeout,
		CQSize:            p.CQSize,
		RCQSize:           p.RCQSize,
		SQSize:            p.SQSize,
		RQSize:            p.RQSize,
		SharedCompChannel: p.SharedCompChannel,
		RetryCount:        p.RetryCount,
		RNRRetryCount:     p.RNRRetryCount,
		PeerTimeout:       p.PeerTimeout,
		SpinLimit:         p.SpinLimit,
	}
}

// Validate returns nil if c can be used, else an error matching
// [rpma.ErrInvalidArgument] naming the first field out of range. A nil c
// is valid (it means the defaults); zero fields are valid (each means its
// default). It checks what a request would use: core.ResolveParams fills
// the defaults in and validates, as NewRequest and ep's NextConnReq do.
func (c *Config) Validate() error {
	_, err := core.ResolveParams("conn_cfg", c.params())
	return err
}

// params is the core view of c (nil stays nil): a copy, field for field
// (TestConfigParams checks that none is forgotten), as the user wrote it:
// core.ResolveParams turns zero fields into defaults. Package ep has the
// same copy (its TestParams guards it).
func (c *Config) params() *core.ConnParams {
	if c == nil {
		return nil
	}
	return &core.ConnParams{
		Timeout:           c.Timeout,
		CQSize:            c.CQSize,
		RCQSize:           c.RCQSize,
		SQSize:            c.SQSize,
		RQSize:            c.RQSize,
		SharedCompChannel: c.SharedCompChannel,
		RetryCount:        c.RetryCount,
		RNRRetryCount:     c.RNRRetryCount,
		PeerTimeout:       c.PeerTimeout,
		AckTimeout:        c.AckTimeout,
		EstablishTimeout:  c.EstablishTimeout,
		WaitMode:          core.WaitMode(c.WaitMode),
		SpinLimit:         c.SpinLimit,
		SRQ:               (*core.SRQ)(c.SRQ),
	}
}
