package srq

import (
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
)

// Config mirrors struct rpma_srq_cfg. A zero field means that field's
// default, so a literal names only the fields it cares about; the zero
// Config and a nil *Config mean [DefaultConfig]. No receive CQ, which
// librpma spells with an RCQSize of 0, is [NoRCQ] here. Out-of-range
// values (negative ones other than NoRCQ among them) give an error
// matching [rpma.ErrInvalidArgument] that names the field.
type Config struct {
	// RQSize is the number of receives the SRQ holds (ibv_create_srq
	// max_wr). 0 means the default, 20.
	RQSize int
	// RCQSize is the number of entries of the SRQ's own receive CQ. 0
	// means the default, 20; [NoRCQ] means none: the receives then
	// complete on each connection's receive CQ (or main CQ).
	RCQSize int
}

// NoRCQ, as Config.RCQSize, asks for an SRQ without a receive CQ of its
// own (librpma's RCQSize 0; a zero field means the default here).
const NoRCQ = core.NoQueue

// params is the core view of c (nil stays nil): the same fields,
// converted, so a field added to one and not the other does not compile.
// core.ResolveSRQParams turns zero fields into defaults.
func (c *Config) params() *core.SRQParams { return (*core.SRQParams)(c) }

// Validate returns nil if c can be used, else an error matching
// [rpma.ErrInvalidArgument] naming the first field out of range, as
// [New] would return it. A nil c is valid (it means the defaults); zero
// fields are valid (each means its default).
func (c *Config) Validate() error {
	_, err := core.ResolveSRQParams("srq_cfg", c.params())
	return err
}

// Defaults of Config: librpma's code (src/srq_cfg.c, RPMA_DEFAULT_SRQ_SIZE)
// uses 20 for both; its header documents 100. This module follows the
// code, so a Go and a C peer built with defaults behave alike.
const (
	DefaultRQSize  = core.DefaultSRQSize
	DefaultRCQSize = core.DefaultSRQRCQSize
)

// DefaultConfig mirrors rpma_srq_cfg_new: a new Config with the defaults
// filled in, RQSize 20, RCQSize 20. It means what &Config{} and a nil
// *Config mean; it is for code that reads the defaults or adjusts them.
func DefaultConfig() *Config { return &Config{RQSize: DefaultRQSize, RCQSize: DefaultRCQSize} }

// SRQ mirrors struct rpma_srq: a shared receive queue that several
// connections receive through (set conn.Config.SRQ), with its own receive
// CQ unless Config.RCQSize is [NoRCQ]. It is a child of its peer, and the
// parent of the connections that use it: Close refuses while any is
// open.
//
// Receives complete in no particular order across connections (librpma:
// an unordered set of buffers); WC.QPNum tells which connection received.
//
// An SRQ is safe for concurrent use by multiple goroutines.
type SRQ core.SRQ

func (s *SRQ) core() *core.SRQ { return (*core.SRQ)(s) }

// New mirrors rpma_srq_new: it creates the shared receive queue
// (ibv_create_srq, one scatter/gather element per receive) and, when
// cfg.RCQSize is not NoRCQ, its receive CQ with its own completion
// channel. A nil cfg, and cfg's zero fields, mean the defaults. Errors: a
// nil or closed p, sizes out of range (see [Config.Validate]) or beyond
// the device's limits match [rpma.ErrInvalidArgument]; a failing verbs
// call matches [rpma.ErrProvider].
func New(p *peer.Peer, cfg *Config) (*SRQ, error) {
	s, err := core.NewSRQ((*core.Peer)(p), cfg.params())
	return (*SRQ)(s), err
}

// Recv mirrors rpma_srq_recv: it posts a receive of up to n bytes into
// dst at off (nil dst with off and n 0: a 0-byte receive). The completion
// carries opContext. A full SRQ gives an error matching
// [rpma.ErrQueueFull]. It does not allocate.
func (s *SRQ) Recv(dst *mr.Local, off, n int, opContext uint64) error {
	return s.core().Recv((*core.MR)(dst), off, n, opContext)
}

// RCQ mirrors rpma_srq_get_rcq: the SRQ's receive CQ, nil when
// Config.RCQSize was NoRCQ. Its Wait does not watch any connection's events.
func (s *SRQ) RCQ() *cq.CQ {
	c := s.core().RCQ()
	if c == nil {
		return nil
	}
	return (*cq.CQ)(c)
}

// Close mirrors rpma_srq_delete: it destroys the SRQ and its receive CQ.
// While connections (or requests) use the SRQ it refuses with an error
// matching [rpma.ErrProvider] and EBUSY, and the SRQ stays usable. Close
// is idempotent and nil-safe.
func (s *SRQ) Close() error { return s.core().Close() }
