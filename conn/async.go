package conn

import (
	"context"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/internal/core"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

// The asynchronous calls (the "...Async" methods) are the per-operation
// calls split in two, for one goroutine that keeps many operations in
// flight: each posts its operation, waiting for room with its ctx as the
// waiting calls do, and returns an [Op]; [Op.Wait] later waits for that
// operation's own completion. They share the waiting calls' contract (see
// "Many goroutines, one connection" in the package documentation): no
// other goroutine's poll or wait takes an Op's completion, and an Op
// allocates nothing. Until its Wait has returned nil, the memory an
// operation reads or writes belongs to the device: do not reuse it.

// Op is an operation posted by an asynchronous call. Its zero value is
// no operation (Wait refuses it). Copies of an Op are the same
// operation; it is waited for once.
type Op struct{ p core.Pending }

// Wait waits for the operation's completion and returns it (a receive's
// tells the message's length). A failed completion is returned with an
// error, as the waiting calls return it; a connection that broke makes
// Wait return an error matching [rpma.ErrConnBroken]. When ctx ends
// first, the error matches ctx.Err() and [rpma.ErrOutcomeUnknown]: the
// operation may still land, and its memory stays the device's until the
// connection closes. A second Wait of the same Op, and Wait on the zero
// Op, return an error matching [rpma.ErrInvalidArgument].
func (o Op) Wait(ctx context.Context) (cq.WC, error) { return o.p.Wait(ctx) }

// WriteAsync posts [Conn.WriteWait]'s write; [Op.Wait] returns once it
// has completed.
func (c *Conn) WriteAsync(ctx context.Context, dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int) (Op, error) {
	p, err := c.core().WriteAsync(ctx, remote(dst), dstOff, local(src), srcOff, n)
	return Op{p}, err
}

// ReadAsync posts [Conn.ReadWait]'s read; once [Op.Wait] returned nil
// the bytes are in dst.
func (c *Conn) ReadAsync(ctx context.Context, dst *mr.Local, dstOff int, src *mr.Remote, srcOff, n int) (Op, error) {
	p, err := c.core().ReadAsync(ctx, local(dst), dstOff, remote(src), srcOff, n)
	return Op{p}, err
}

// FlushAsync posts [Conn.FlushWait]'s flush; once [Op.Wait] returned nil
// the range is persistent (or visible, by typ).
func (c *Conn) FlushAsync(ctx context.Context, dst *mr.Remote, dstOff, n int, typ rpma.FlushType) (Op, error) {
	p, err := c.core().FlushAsync(ctx, remote(dst), dstOff, n, typ)
	return Op{p}, err
}

// WriteAndFlushAsync posts [Conn.WriteAndFlushWait]'s chain; once
// [Op.Wait] returned nil the bytes are durable (or visible, by typ).
func (c *Conn) WriteAndFlushAsync(ctx context.Context, dst *mr.Remote, dstOff int, src *mr.Local, srcOff, n int, typ rpma.FlushType) (Op, error) {
	p, err := c.core().WriteAndFlushAsync(ctx, remote(dst), dstOff, local(src), srcOff, n, typ)
	return Op{p}, err
}

// AtomicWriteAsync posts [Conn.AtomicWriteWait]'s atomic write.
func (c *Conn) AtomicWriteAsync(ctx context.Context, dst *mr.Remote, dstOff int, src [8]byte) (Op, error) {
	p, err := c.core().AtomicWriteAsync(ctx, remote(dst), dstOff, src)
	return Op{p}, err
}

// CompareAndSwapAsync posts [Conn.CompareAndSwapWait]'s compare-and-swap;
// once [Op.Wait] returned nil the word's old value is at resultOff of
// result, in host order (binary.NativeEndian).
func (c *Conn) CompareAndSwapAsync(ctx context.Context, dst *mr.Remote, dstOff int, result *mr.Local, resultOff int, compare, swap uint64) (Op, error) {
	p, err := c.core().CompareAndSwapAsync(ctx, remote(dst), dstOff, local(result), resultOff, compare, swap)
	return Op{p}, err
}

// FetchAndAddAsync posts [Conn.FetchAndAddWait]'s fetch-and-add; once
// [Op.Wait] returned nil the word's old value is at resultOff of result,
// in host order (binary.NativeEndian).
func (c *Conn) FetchAndAddAsync(ctx context.Context, dst *mr.Remote, dstOff int, result *mr.Local, resultOff int, add uint64) (Op, error) {
	p, err := c.core().FetchAndAddAsync(ctx, remote(dst), dstOff, local(result), resultOff, add)
	return Op{p}, err
}

// SendAsync posts [Conn.SendWait]'s send; [Op.Wait] returns once the
// other side received it.
func (c *Conn) SendAsync(ctx context.Context, src *mr.Local, off, n int) (Op, error) {
	p, err := c.core().SendAsync(ctx, local(src), off, n)
	return Op{p}, err
}

// RecvAsync posts [Conn.RecvWait]'s receive into dst at [off, off+n);
// [Op.Wait] returns its completion once a message has landed there.
func (c *Conn) RecvAsync(ctx context.Context, dst *mr.Local, off, n int) (Op, error) {
	p, err := c.core().RecvAsync(ctx, local(dst), off, n)
	return Op{p}, err
}
