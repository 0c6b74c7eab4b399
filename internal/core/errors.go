package core

import (
	"errors"
	"os"
	"syscall"

	"github.com/hashicorp/go-multierror"

	"github.com/gorpma/rpma/internal/ibv"
	"github.com/gorpma/rpma/internal/rpmaerr"
	"github.com/gorpma/rpma/rpma"
)

// closedError is returned by an operation on a closed (or consumed) object.
// It matches rpma.ErrInvalidArgument, as librpma returns RPMA_E_INVAL for a
// NULL object, and os.ErrClosed.
type closedError struct{ op, what string }

func (e *closedError) Error() string {
	return "rpma: " + e.op + ": " + rpma.ErrInvalidArgument.Error() + " (" + e.what + " is closed)"
}

func (e *closedError) Unwrap() []error { return []error{rpma.ErrInvalidArgument, os.ErrClosed} }

func errClosed(op, what string) error { return &closedError{op: op, what: what} }

// errNil is the error for a nil object argument or receiver.
func errNil(op, what string) error { return rpmaerr.Inval(op, "%s is nil", what) }

// provider turns an error of package ibv into an rpma error: a failed C
// call becomes an [*rpma.OpError] with CodeProvider, the name of the call
// and its errno; ibv.ErrNotSupported (a build without cgo or Linux)
// becomes CodeNoSupp for op.
func provider(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ibv.ErrNotSupported) {
		return rpmaerr.NoSupp(op, "%v", err)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		errno, _ := se.Err.(syscall.Errno)
		return rpmaerr.Provider(se.Syscall, errno)
	}
	var ae *ibv.AddrInfoError
	if errors.As(err, &ae) {
		return rpmaerr.New("rdma_getaddrinfo", rpma.CodeProvider, 0, "%s", ae.Msg)
	}
	return rpmaerr.New(op, rpma.CodeProvider, 0, "%v", err)
}

// providerMsg is provider with a detail message for humans.
func providerMsg(op string, err error, format string, args ...any) error {
	e := provider(op, err)
	var oe *rpma.OpError
	if errors.As(e, &oe) && oe.Msg == "" {
		return rpmaerr.New(oe.Op, oe.Code, oe.Errno, format, args...)
	}
	return e
}

// statusErrno turns the status of an rdma_cm error event into an errno.
func statusErrno(status int) syscall.Errno {
	if status < 0 {
		return syscall.Errno(-status)
	}
	return syscall.Errno(status)
}

// errnoOf returns the errno err carries, 0 if none.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	errors.As(err, &e)
	return e
}

// isAgain reports whether err is the "no event yet" of a non-blocking
// channel: EAGAIN, or ENODATA as librdmacm reports a short read.
func isAgain(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, errNoData)
}

// errList aggregates the errors of a teardown with go-multierror.
type errList struct{ m *multierror.Error }

// add appends err unless it is nil.
func (l *errList) add(err error) {
	if err != nil {
		l.m = multierror.Append(l.m, err)
	}
}

// err returns nil for no error, the error itself for one, and the
// *multierror.Error for several.
func (l *errList) err() error {
	switch {
	case l.m == nil || len(l.m.Errors) == 0:
		return nil
	case len(l.m.Errors) == 1:
		return l.m.Errors[0]
	default:
		return l.m
	}
}
