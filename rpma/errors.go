package rpma

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
)

// Code is a librpma error code: one of the negative RPMA_E_* values of
// librpma.h. Zero means success.
type Code int

// Error codes, with the values of librpma.h.
const (
	// CodeUnknown mirrors RPMA_E_UNKNOWN: an unexpected event, an unknown
	// CQ, a provider failure without errno.
	CodeUnknown Code = -100000
	// CodeNoSupp mirrors RPMA_E_NOSUPP: the operation or flush type is not
	// supported.
	CodeNoSupp Code = -100001
	// CodeProvider mirrors RPMA_E_PROVIDER: a verbs or rdma_cm call failed.
	CodeProvider Code = -100002
	// CodeNoMem mirrors RPMA_E_NOMEM: out of memory.
	CodeNoMem Code = -100003
	// CodeInval mirrors RPMA_E_INVAL: an invalid argument.
	CodeInval Code = -100004
	// CodeNoCompletion mirrors RPMA_E_NO_COMPLETION: no next completion is
	// available.
	CodeNoCompletion Code = -100005
	// CodeNoEvent mirrors RPMA_E_NO_EVENT: no next event is available.
	CodeNoEvent Code = -100006
	// CodeAgain mirrors RPMA_E_AGAIN: a temporary error, try again.
	CodeAgain Code = -100007
	// CodeSharedChannel mirrors RPMA_E_SHARED_CHANNEL: the completion
	// channel is shared, so the per-CQ wait cannot be used.
	CodeSharedChannel Code = -100008
	// CodeNotSharedChnl mirrors RPMA_E_NOT_SHARED_CHNL: the completion
	// channel is not shared, so the per-connection wait cannot be used.
	CodeNotSharedChnl Code = -100009
)

// String returns librpma's text for c, as rpma_err_2str does: "Success" for
// zero and "Unknown error" for any code librpma does not define.
func (c Code) String() string { return ErrorString(int(c)) }

// ErrorString mirrors rpma_err_2str: it returns the text of any int return
// value of librpma, "Success" for zero and "Unknown error" for any value that
// is not an RPMA_E_* code.
func ErrorString(code int) string {
	switch Code(code) {
	case 0:
		return "Success"
	case CodeNoSupp:
		return "Not supported"
	case CodeProvider:
		return "Provider error occurred"
	case CodeNoMem:
		return "Out of memory"
	case CodeInval:
		return "Invalid argument"
	case CodeNoCompletion:
		return "No next completion available"
	case CodeNoEvent:
		return "No next event available"
	case CodeAgain:
		return "Temporary error, try again"
	case CodeSharedChannel:
		return "Completion channel is shared"
	case CodeNotSharedChnl:
		return "Completion channel is not shared"
	default: // CodeUnknown and anything else
		return "Unknown error"
	}
}

// coder is implemented by every error of this package that carries a librpma
// code; CodeOf finds it through any wrapping.
type coder interface {
	error
	rpmaCode() Code
}

// codeError is the concrete type of the per-code sentinels.
type codeError struct{ code Code }

func (e *codeError) Error() string  { return e.code.String() }
func (e *codeError) rpmaCode() Code { return e.code }

// Sentinel errors, one per librpma error code. Their Error method returns
// librpma's string for the code. Match them with [errors.Is]; every error of
// this module that mirrors an RPMA_E_* return matches exactly one of them.
var (
	// ErrUnknown is the sentinel of CodeUnknown (RPMA_E_UNKNOWN).
	ErrUnknown error = &codeError{CodeUnknown}
	// ErrNotSupported is the sentinel of CodeNoSupp (RPMA_E_NOSUPP).
	ErrNotSupported error = &codeError{CodeNoSupp}
	// ErrProvider is the sentinel of CodeProvider (RPMA_E_PROVIDER).
	ErrProvider error = &codeError{CodeProvider}
	// ErrNoMem is the sentinel of CodeNoMem (RPMA_E_NOMEM).
	ErrNoMem error = &codeError{CodeNoMem}
	// ErrInvalidArgument is the sentinel of CodeInval (RPMA_E_INVAL).
	ErrInvalidArgument error = &codeError{CodeInval}
	// ErrNoCompletion is the sentinel of CodeNoCompletion
	// (RPMA_E_NO_COMPLETION).
	ErrNoCompletion error = &codeError{CodeNoCompletion}
	// ErrNoEvent is the sentinel of CodeNoEvent (RPMA_E_NO_EVENT).
	ErrNoEvent error = &codeError{CodeNoEvent}
	// ErrAgain is the sentinel of CodeAgain (RPMA_E_AGAIN).
	ErrAgain error = &codeError{CodeAgain}
	// ErrSharedChannel is the sentinel of CodeSharedChannel
	// (RPMA_E_SHARED_CHANNEL).
	ErrSharedChannel error = &codeError{CodeSharedChannel}
	// ErrNotSharedChannel is the sentinel of CodeNotSharedChnl
	// (RPMA_E_NOT_SHARED_CHNL).
	ErrNotSharedChannel error = &codeError{CodeNotSharedChnl}
)

// sentinel returns the sentinel error of c, ErrUnknown for codes librpma does
// not define and nil for zero.
func (c Code) sentinel() error {
	switch c {
	case 0:
		return nil
	case CodeNoSupp:
		return ErrNotSupported
	case CodeProvider:
		return ErrProvider
	case CodeNoMem:
		return ErrNoMem
	case CodeInval:
		return ErrInvalidArgument
	case CodeNoCompletion:
		return ErrNoCompletion
	case CodeNoEvent:
		return ErrNoEvent
	case CodeAgain:
		return ErrAgain
	case CodeSharedChannel:
		return ErrSharedChannel
	case CodeNotSharedChnl:
		return ErrNotSharedChannel
	default:
		return ErrUnknown
	}
}

// aliasError is a Go-only sentinel that also reports a librpma code.
type aliasError struct {
	msg  string
	code Code
}

func (e *aliasError) Error() string  { return e.msg }
func (e *aliasError) rpmaCode() Code { return e.code }

// Is reports whether target is the sentinel of the code librpma would have
// returned in the same situation.
func (e *aliasError) Is(target error) bool { return target == e.code.sentinel() }

// Errors that librpma does not have. Both are plain sentinels, so returning
// them costs no allocation.
var (
	// ErrConnBroken reports that a connection's queue pair has gone to the
	// error state (for example after a failed work completion or a lost
	// connection), so the work request could not be posted. It is a Go
	// addition with no librpma counterpart: it matches no RPMA_E_* sentinel
	// and [CodeOf] reports no code for it.
	ErrConnBroken error = errors.New("rpma: connection broken (QP in error state)")

	// ErrQueueFull reports that a work request could not be posted because
	// the send, receive or shared receive queue is full, or the completion
	// queue its completions go to could overrun. It is a Go addition; librpma
	// returns RPMA_E_PROVIDER in that case, so ErrQueueFull also matches
	// [ErrProvider] with [errors.Is] and [CodeOf] reports [CodeProvider].
	ErrQueueFull error = &aliasError{msg: "rpma: queue full", code: CodeProvider}

	// ErrPeerTimeout is the cause of a connection the library reported
	// lost because the other side did not answer within the connection's
	// conn.Config.PeerTimeout: posts then return an error matching
	// [ErrConnBroken] and ErrPeerTimeout, and waits a [*ConnEventError]
	// (ConnLost) whose Cause matches it. It is a Go addition.
	ErrPeerTimeout = errors.New("rpma: the other side did not answer within the peer timeout")

	// ErrOutcomeUnknown matches the error of a waiting call (such as
	// conn.Conn.WriteWait) whose ctx ended after its operation was
	// posted: the operation may still complete, or have completed, and
	// the memory it reads or writes may still be in the device's use
	// until the connection is closed. The error also matches ctx.Err().
	// A call that returns ctx's error without it posted nothing. It is a
	// Go addition.
	ErrOutcomeUnknown = errors.New("rpma: the operation was posted; its outcome is unknown")
)

// ConnEventError ends a wait for completions (cq.CQ.Wait, conn.Conn.Wait)
// because the connection got Event, one of [ConnClosed], [ConnLost],
// [ConnRejected] or [ConnUnreachable]: no completion will come from a
// peer that is gone. It is a Go addition (librpma's rpma_cq_wait would
// block). It matches [ErrConnBroken]; the event is also returned by the
// connection's next event call.
type ConnEventError struct {
	Event ConnEvent
	// Cause is why the library itself ended the connection with Event
	// (ConnLost), for example a fatal asynchronous event of the device;
	// nil when the event came from rdma_cm.
	Cause error
}

var _ error = (*ConnEventError)(nil)

// Error returns, for example, "rpma: waiting for completions: Connection
// closed", followed by the cause when there is one.
func (e *ConnEventError) Error() string {
	if e.Cause != nil {
		return "rpma: waiting for completions: " + e.Event.String() + ": " + e.Cause.Error()
	}
	return "rpma: waiting for completions: " + e.Event.String()
}

// Unwrap returns the cause, nil if none.
func (e *ConnEventError) Unwrap() error { return e.Cause }

// Is reports whether target is [ErrConnBroken].
func (e *ConnEventError) Is(target error) bool { return target == ErrConnBroken }

// CodeOf returns the librpma code carried by err or by any error it wraps:
// the code of a sentinel, of an [*OpError] or of [ErrQueueFull]. It returns
// false when err carries no code, for example nil, [ErrConnBroken], a
// [*WCError] or an error from outside this module.
func CodeOf(err error) (Code, bool) {
	var c coder
	if errors.As(err, &c) {
		return c.rpmaCode(), true
	}
	return 0, false
}

// OpError is the error returned when an operation fails with a librpma code.
// It is the Go form of "return RPMA_E_*" plus the errno librpma would only
// have logged.
//
// errors.Is matches an OpError against the sentinel of its Code (for example
// [ErrProvider]) and, when Errno is non-zero, against that errno (for example
// unix.EOPNOTSUPP), also through fmt.Errorf("%w") wrapping. errors.As
// recovers the *OpError itself.
//
// OpError values hold no pointers to per-call data, so errors for hot paths
// can be built once as package variables, for example
//
//	var errPostSendNoMem error = &rpma.OpError{Op: "ibv_post_send", Code: rpma.CodeProvider, Errno: unix.ENOMEM}
//
// and returned as they are: returning such a prebuilt error does not allocate.
type OpError struct {
	// Op is the failing call: the verbs or rdma_cm function for provider
	// errors (for example "ibv_reg_mr"), otherwise the librpma function
	// name without its "rpma_" prefix (for example "mr_reg").
	Op string
	// Code is the librpma code; see [Code].
	Code Code
	// Errno is the errno reported by the failing C call, or 0 if none.
	// It is a syscall.Errno, of which unix.Errno is an alias.
	Errno syscall.Errno
	// Msg is an optional detail for humans, or "".
	Msg string
}

var _ error = (*OpError)(nil)

// Error returns "rpma: op: code text[: errno text][ (detail)]", for example
// "rpma: ibv_reg_mr: Provider error occurred: operation not supported (maybe
// FsDAX needs ODP)".
func (e *OpError) Error() string {
	b := make([]byte, 0, 64+len(e.Op)+len(e.Msg))
	b = append(b, "rpma: "...)
	if e.Op != "" {
		b = append(b, e.Op...)
		b = append(b, ": "...)
	}
	b = append(b, e.Code.String()...)
	if e.Errno != 0 {
		b = append(b, ": "...)
		b = append(b, e.Errno.Error()...)
	}
	if e.Msg != "" {
		b = append(b, " ("...)
		b = append(b, e.Msg...)
		b = append(b, ')')
	}
	return string(b)
}

// Unwrap returns the sentinel of e.Code and, if non-zero, e.Errno.
func (e *OpError) Unwrap() []error {
	s := e.Code.sentinel()
	switch {
	case s == nil && e.Errno == 0:
		return nil
	case s == nil:
		return []error{e.Errno}
	case e.Errno == 0:
		return []error{s}
	default:
		return []error{s, e.Errno}
	}
}

// Is reports whether target is the sentinel of e.Code or equals e.Errno.
// It gives the same answers as walking [OpError.Unwrap], without allocating,
// so errors.Is on a hot path stays cheap when it matches.
func (e *OpError) Is(target error) bool {
	if s := e.Code.sentinel(); s != nil && target == s {
		return true
	}
	if errno, ok := target.(syscall.Errno); ok && e.Errno != 0 {
		return errno == e.Errno
	}
	return false
}

func (e *OpError) rpmaCode() Code { return e.Code }

// inval is this package's own RPMA_E_INVAL (the others build theirs
// with internal/rpmaerr, which imports this package).
func inval(op, format string, args ...any) error {
	return &OpError{Op: op, Code: CodeInval, Msg: fmt.Sprintf(format, args...)}
}

// codeSuffix formats an unknown enum value as "Type(value)".
func codeSuffix(typ string, v int64) string {
	return typ + "(" + strconv.FormatInt(v, 10) + ")"
}
