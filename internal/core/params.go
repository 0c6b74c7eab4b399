package core

import (
	"math"
	"time"

	"github.com/gorpma/rpma/internal/rpmaerr"
)

// ConnParams is the implementation side of conn.Config, field for field
// (conn.Config has *srq.SRQ where this has *SRQ, so the two are copied,
// not converted; a test in package conn checks that no field is
// forgotten). Documentation lives on conn.Config.
//
// As given to ResolveParams, a ConnParams holds what the user wrote: a
// zero field means that field's default, and [NoQueue] and [NoRetries]
// spell a queue of size 0 and no retries. ResolveParams returns the
// values to use, in which 0 is 0; only those reach the verbs layer.
type ConnParams struct {
	Timeout           time.Duration
	CQSize            int
	RCQSize           int
	SQSize            int
	RQSize            int
	SharedCompChannel bool
	RetryCount        int
	RNRRetryCount     int
	PeerTimeout       time.Duration
	AckTimeout        time.Duration
	EstablishTimeout  time.Duration
	WaitMode          WaitMode
	SpinLimit         time.Duration
	SRQ               *SRQ
}

// WaitMode says how a connection's completion waits block (conn.WaitMode).
type WaitMode int

// The wait modes.
const (
	// WaitPoller parks waiting goroutines in Go's runtime poller.
	WaitPoller WaitMode = iota
	// WaitThread blocks the waiting goroutine's thread in epoll_wait
	// (threadwait_linux.go).
	WaitThread
)

// Names for the zeros that are settings of their own, since a zero field
// means the default.
const (
	// NoQueue, as SQSize or RQSize, asks for a queue of size 0; as an
	// RCQSize (of a connection or of an SRQ), for no receive CQ.
	NoQueue = -1
	// NoRetries, as RetryCount or RNRRetryCount, asks for a count of 0.
	NoRetries = -1
	// NoEstablishTimeout, as EstablishTimeout, leaves an accepted
	// connection unbounded until it is established (librpma's behaviour).
	NoEstablishTimeout time.Duration = -1
	// NoSpin, as SpinLimit, turns the spin before a park off: every wait
	// that finds nothing parks, with the CQ armed all the time.
	NoSpin time.Duration = -1
)

// librpma's defaults (src/conn_cfg.c) and the limits of this module.
const (
	DefaultTimeout       = 1000 * time.Millisecond
	DefaultCQSize        = 10
	DefaultRCQSize       = 0
	DefaultSQSize        = 10
	DefaultRQSize        = 10
	DefaultRetryCount    = 7
	DefaultRNRRetryCount = 7

	// DefaultEstablishTimeout bounds an accepted connection's handshake
	// when neither EstablishTimeout nor PeerTimeout is set: handshakes in
	// a 300-client storm on rxe took up to 13 s, and Linux bounds a
	// half-open TCP handshake at about 60 s.
	DefaultEstablishTimeout = 30 * time.Second

	MaxRetryCount = 7 // a 3-bit field on the wire

	// The range of a PeerTimeout that is not 0 (off).
	MinPeerTimeout = 100 * time.Millisecond
	MaxPeerTimeout = time.Hour
	MaxTimeout     = time.Duration(math.MaxInt32) * time.Millisecond
	MaxQueueSize   = math.MaxInt32

	// The range of an AckTimeout that is not 0 (rdma_cm's choice): the
	// local ACK timeout is 4.096 µs × 2^k for k in [1, 31] (0 would mean
	// no timeout at all).
	MinAckTimeout = ackTimeoutUnit << 1
	MaxAckTimeout = ackTimeoutUnit << 31

	// DefaultSpinLimit is the longest a completion wait spins before it
	// parks by default (spin.go): 50 µs, ten times or more an RDMA
	// write's round trip on a NIC, where a spin that catches its
	// completion saves the park's system calls and wake-up (several µs
	// each); a spin that keeps missing halves itself to off.
	DefaultSpinLimit = 50 * time.Microsecond
	// MaxSpinLimit bounds a SpinLimit: a spin is CPU time nobody else
	// gets.
	MaxSpinLimit = time.Millisecond

	// MaxConnectPrivateData is what rdma_cm (RDMA_PS_TCP over IB CM) carries
	// in a connect request: 92 bytes less its 36-byte header.
	MaxConnectPrivateData = 56
	// MaxAcceptPrivateData is what rdma_cm carries in an accept (REP).
	MaxAcceptPrivateData = 196
)

// DefaultConnParams returns librpma's default connection configuration.
func DefaultConnParams() ConnParams {
	return ConnParams{
		Timeout:       DefaultTimeout,
		CQSize:        DefaultCQSize,
		RCQSize:       DefaultRCQSize,
		SQSize:        DefaultSQSize,
		RQSize:        DefaultRQSize,
		RetryCount:    DefaultRetryCount,
		RNRRetryCount: DefaultRNRRetryCount,
		SpinLimit:     DefaultSpinLimit,
	}
}

// ResolveParams returns the parameters to use for p: the defaults for nil,
// else p with its defaults filled in and its explicit spellings replaced
// by what they spell (withDefaults), validated.
func ResolveParams(op string, p *ConnParams) (ConnParams, error) {
	if p == nil {
		return DefaultConnParams(), nil
	}
	r := p.withDefaults()
	if err := r.validate(op); err != nil {
		return ConnParams{}, err
	}
	return r, nil
}

// withDefaults is the one place where a user's ConnParams becomes the
// values to use: each zero field becomes its default, NoQueue a size of
// 0 and NoRetries a count of 0. Any other value is left for validate to
// judge.
func (p ConnParams) withDefaults() ConnParams {
	d := DefaultConnParams()
	if p.Timeout == 0 {
		p.Timeout = d.Timeout
	}
	if p.CQSize == 0 {
		p.CQSize = d.CQSize // a connection always has its main CQ
	}
	p.RCQSize = sizeOr(p.RCQSize, d.RCQSize)
	p.SQSize = sizeOr(p.SQSize, d.SQSize)
	p.RQSize = sizeOr(p.RQSize, d.RQSize)
	p.RetryCount = countOr(p.RetryCount, d.RetryCount)
	p.RNRRetryCount = countOr(p.RNRRetryCount, d.RNRRetryCount)
	// PeerTimeout and AckTimeout: 0 (off, rdma_cm's) is their default.
	switch p.SpinLimit {
	case 0:
		p.SpinLimit = d.SpinLimit
	case NoSpin:
		p.SpinLimit = 0 // resolved: 0 is no spin
	}
	return p
}

// sizeOr is size with 0 meaning def and NoQueue meaning 0.
func sizeOr(size, def int) int {
	switch size {
	case 0:
		return def
	case NoQueue:
		return 0
	}
	return size
}

// countOr is count with 0 meaning def and NoRetries meaning 0.
func countOr(count, def int) int {
	switch count {
	case 0:
		return def
	case NoRetries:
		return 0
	}
	return count
}

// validate returns an rpma.ErrInvalidArgument error naming the first field
// of p, resolved by withDefaults, that is out of range, or nil. Only
// values the user gave survive withDefaults out of range, so the messages
// speak the user's terms: the value as given, and what 0 and the
// explicit spellings mean.
func (p *ConnParams) validate(op string) error {
	switch {
	case p.Timeout < time.Millisecond || p.Timeout > MaxTimeout:
		return rpmaerr.Inval(op, "Timeout %v out of range [1ms, %v] (0: the default, %v)", p.Timeout, MaxTimeout, DefaultTimeout)
	case p.CQSize < 1 || p.CQSize > MaxQueueSize:
		return rpmaerr.Inval(op, "CQSize %d out of range [1, %d] (0: the default, %d)", p.CQSize, MaxQueueSize, DefaultCQSize)
	case p.RCQSize < 0 || p.RCQSize > MaxQueueSize:
		return rpmaerr.Inval(op, "RCQSize %d out of range [1, %d] (0, the default, or NoQueue: no receive CQ)", p.RCQSize, MaxQueueSize)
	case p.SQSize < 0 || p.SQSize > MaxQueueSize:
		return rpmaerr.Inval(op, "SQSize %d out of range [1, %d] (0: the default, %d; NoQueue: a queue of 0)", p.SQSize, MaxQueueSize, DefaultSQSize)
	case p.RQSize < 0 || p.RQSize > MaxQueueSize:
		return rpmaerr.Inval(op, "RQSize %d out of range [1, %d] (0: the default, %d; NoQueue: a queue of 0)", p.RQSize, MaxQueueSize, DefaultRQSize)
	case p.RetryCount < 0 || p.RetryCount > MaxRetryCount:
		return rpmaerr.Inval(op, "RetryCount %d out of range [1, %d] (0: the default, %d; NoRetries: 0)", p.RetryCount, MaxRetryCount, DefaultRetryCount)
	case p.RNRRetryCount < 0 || p.RNRRetryCount > MaxRetryCount:
		return rpmaerr.Inval(op, "RNRRetryCount %d out of range [1, %d] (0: the default, %d; NoRetries: 0)", p.RNRRetryCount, MaxRetryCount, DefaultRNRRetryCount)
	case p.PeerTimeout != 0 && (p.PeerTimeout < MinPeerTimeout || p.PeerTimeout > MaxPeerTimeout):
		return rpmaerr.Inval(op, "PeerTimeout %v out of range [%v, %v] (0: off)", p.PeerTimeout, MinPeerTimeout, MaxPeerTimeout)
	case p.EstablishTimeout != 0 && p.EstablishTimeout != NoEstablishTimeout &&
		(p.EstablishTimeout < MinPeerTimeout || p.EstablishTimeout > MaxPeerTimeout):
		return rpmaerr.Inval(op, "EstablishTimeout %v out of range [%v, %v] (0: PeerTimeout if set, else %v; NoEstablishTimeout: no bound)",
			p.EstablishTimeout, MinPeerTimeout, MaxPeerTimeout, DefaultEstablishTimeout)
	case p.AckTimeout != 0 && (p.AckTimeout < 0 || p.AckTimeout > MaxAckTimeout):
		return rpmaerr.Inval(op, "AckTimeout %v out of range [%v, %v] (0: rdma_cm's)", p.AckTimeout, MinAckTimeout, MaxAckTimeout)
	case p.WaitMode != WaitPoller && p.WaitMode != WaitThread:
		return rpmaerr.Inval(op, "WaitMode %d is neither WaitPoller (0, the default) nor WaitThread (1)", p.WaitMode)
	case p.SpinLimit < 0 || p.SpinLimit > MaxSpinLimit:
		return rpmaerr.Inval(op, "SpinLimit %v out of range (0, %v] (0: the default, %v; NoSpin: no spin)", p.SpinLimit, MaxSpinLimit, DefaultSpinLimit)
	}
	return nil
}

// ackTimeoutUnit is the unit of the local ACK timeout's exponent.
const ackTimeoutUnit = 4096 * time.Nanosecond

// AckTimeoutExponent returns the exponent k in [1, 31] of the smallest
// local ACK timeout 4.096 µs × 2^k that is at least d (d in (0,
// MaxAckTimeout]).
func AckTimeoutExponent(d time.Duration) uint8 {
	k := uint8(1)
	for k < 31 && ackTimeoutUnit<<k < d {
		k++
	}
	return k
}

// probeSlots is the send-queue slot and the CQ entry the liveness probe
// of a connection with a PeerTimeout keeps for itself (see liveness.go).
func (p *ConnParams) probeSlots() int {
	if p.PeerTimeout > 0 {
		return 1
	}
	return 0
}

// checkDevice checks the sizes against the device's limits, so that a size
// the device cannot give is an invalid argument rather than a provider
// error.
func (p *ConnParams) checkDevice(op string, peer *Peer) error {
	a := &peer.attr
	switch {
	case a.MaxCQE > 0 && p.CQSize+p.probeSlots() > a.MaxCQE:
		return rpmaerr.Inval(op, "CQSize %d (+%d for the liveness probe) exceeds the device's max_cqe %d", p.CQSize, p.probeSlots(), a.MaxCQE)
	case a.MaxCQE > 0 && p.RCQSize > a.MaxCQE:
		return rpmaerr.Inval(op, "RCQSize %d exceeds the device's max_cqe %d", p.RCQSize, a.MaxCQE)
	case a.MaxQPWR > 0 && p.SQSize+p.probeSlots() > a.MaxQPWR:
		return rpmaerr.Inval(op, "SQSize %d (+%d for the liveness probe) exceeds the device's max_qp_wr %d", p.SQSize, p.probeSlots(), a.MaxQPWR)
	case a.MaxQPWR > 0 && p.RQSize > a.MaxQPWR:
		return rpmaerr.Inval(op, "RQSize %d exceeds the device's max_qp_wr %d", p.RQSize, a.MaxQPWR)
	}
	return nil
}

// timeoutMs is p.Timeout in whole milliseconds.
func (p *ConnParams) timeoutMs() int { return int(p.Timeout / time.Millisecond) }

// checkPrivateData checks private data for connect (active) or accept.
func checkPrivateData(op string, pdata []byte, passive bool) error {
	max := MaxConnectPrivateData
	if passive {
		max = MaxAcceptPrivateData
	}
	if len(pdata) > max {
		side := "connect"
		if passive {
			side = "accept"
		}
		return rpmaerr.Inval(op, "%d bytes of private data, at most %d on %s", len(pdata), max, side)
	}
	return nil
}
