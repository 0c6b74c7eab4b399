package conn

import (
	"context"

	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/mr"
)

// Grant is the other side's access to a range of a local region, given to
// one connection by [Conn.Grant] and taken back by [Grant.Revoke] (or the
// connection's Close). librpma has no such thing: there, every connection
// of a peer reaches every region registered for remote access, and on
// rxe a region's key is 24 bits of index and 8 random bits, which a
// client can guess.
//
// It is a memory window of type 2B bound on the connection's QP: the
// device accepts its key only for requests arriving on that QP, and only
// within the granted range; other connections, and this one after
// Revoke, get a remote access error (IBV_WC_REM_ACCESS_ERR on their side,
// which breaks their connection). Isolation rests on that check of the
// device, not on the key's secrecy.
type Grant core.Grant

func (g *Grant) core() *core.Grant { return (*core.Grant)(g) }

// Grant gives the other side of c access to [off, off+n) of m with usage,
// and returns once the device has bound the grant's window, or when ctx
// ends first.
//
// m must be registered with [mr.UsageGranted] on c's peer, and usage is a
// non-empty subset of m's remote usages: [mr.UsageReadSrc],
// [mr.UsageWriteDst], [mr.UsageFlushVisibility],
// [mr.UsageFlushPersistent], [mr.UsageAtomicDst]. Where the flush is
// emulated (an RDMA read of the flushed range: Conn.NativeFlush is false
// on the other side) a flush usage grants remote read too, as it does
// for a region (librpma's rpma_peer_usage2access).
//
// The other side uses the grant as it uses a region: it decodes
// [Grant.Descriptor] with [mr.RemoteFromDescriptor] (a C librpma peer
// with rpma_mr_remote_from_descriptor), or [Grant.ExtendedDescriptor]
// with [mr.RemoteFromExtendedDescriptor] for [mr.UsageAtomicDst].
//
// Costs: the bind takes a send-queue slot and a CQ entry until its
// completion, which is the library's own (GetWC never returns it; a
// completion wait may wake for it and find nothing). A grant of part of
// m also registers that part (ibv_reg_mr) for its window, because rxe
// checks a window's requests against its registration's range, not the
// window's.
//
// Errors, before anything is posted: a nil ctx, c or m, a closed c or m,
// an m not registered with mr.UsageGranted or on another peer, a usage
// outside m's, an empty or out-of-range [off, off+n) match
// [rpma.ErrInvalidArgument]; a device without type 2B windows, or an m
// that needed On-Demand Paging, [rpma.ErrNotSupported]. A failing
// ibv_alloc_mw, ibv_reg_mr or bind matches [rpma.ErrProvider]; a full
// queue [rpma.ErrQueueFull]. A ctx that has already ended gets its error
// before anything is allocated or posted. When ctx ends while the bind
// is outstanding, the error matches ctx's and no grant is returned; the
// bind stays queued, and its window stays allocated (and m cannot be
// deregistered: [mr.Local.Dereg] refuses with EBUSY) until the bind's
// completion is polled by any poll or wait of c's CQ ([cq.CQ.GetWC],
// [cq.CQ.Wait], c's waiting calls, the PeerTimeout watch): the library
// then revokes it on its own, and m deregisters again. Closing c revokes
// it too. A bind that completes just as ctx ends returns its grant.
func (c *Conn) Grant(ctx context.Context, m *mr.Local, off, n int, usage mr.Usage) (*Grant, error) {
	g, err := c.core().Grant(ctx, local(m), off, n, int(usage))
	return (*Grant)(g), err
}

// Revoke takes the grant back: its window is deallocated (ibv_dealloc_mw)
// and the other side's requests with its key fail with a remote access
// error from then on. It is idempotent and nil-safe. When the
// deallocation fails the grant stays in force and Revoke may be retried.
func (g *Grant) Revoke() error { return g.core().Revoke() }

// Live reports whether the grant is in force: neither revoked nor
// ended by its connection's Close.
func (g *Grant) Live() bool { return g.core().Live() }

// Descriptor returns the grant's descriptor in librpma's 21-byte form
// (address, size, the window's key, the granted usage), which the other
// side decodes as a region's (a C librpma peer too).
func (g *Grant) Descriptor() [mr.DescriptorSize]byte { return g.core().Descriptor() }

// ExtendedDescriptor returns Descriptor and a 22nd byte with
// [mr.UsageAtomicDst] if granted, for [mr.RemoteFromExtendedDescriptor].
func (g *Grant) ExtendedDescriptor() [mr.ExtendedDescriptorSize]byte {
	return g.core().ExtendedDescriptor()
}

// Addr returns the address of the granted range (the region's address
// plus off).
func (g *Grant) Addr() uint64 { return g.core().Addr() }

// Size returns the size of the granted range.
func (g *Grant) Size() int { return g.core().Size() }

// RKey returns the key of the grant's window.
func (g *Grant) RKey() uint32 { return g.core().RKey() }

// Usage returns the usage granted.
func (g *Grant) Usage() mr.Usage { return mr.Usage(g.core().Usage()) }
