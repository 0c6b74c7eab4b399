// Package rpmaerr builds the module's errors: the [*rpma.OpError] values
// that every package returns for a refused argument, a missing feature or
// a failed verbs or rdma_cm call. It is internal so that package rpma's
// API holds what a user inspects (the codes, the sentinels, OpError), not
// the constructors the library itself calls.
package rpmaerr

import (
	"fmt"
	"syscall"

	"github.com/gorpma/rpma/rpma"
)

// New returns an [*rpma.OpError] for op with the given code and errno (0
// if none). A non-empty format is formatted with args, as by fmt.Sprintf,
// into the detail message.
func New(op string, code rpma.Code, errno syscall.Errno, format string, args ...any) error {
	var msg string
	if format != "" {
		msg = fmt.Sprintf(format, args...)
	}
	return &rpma.OpError{Op: op, Code: code, Errno: errno, Msg: msg}
}

// Inval returns an [*rpma.OpError] with [rpma.CodeInval] (RPMA_E_INVAL)
// for op, with the detail formatted from format and args.
func Inval(op, format string, args ...any) error {
	return New(op, rpma.CodeInval, 0, format, args...)
}

// NoSupp returns an [*rpma.OpError] with [rpma.CodeNoSupp]
// (RPMA_E_NOSUPP) for op, with the detail formatted from format and args.
func NoSupp(op, format string, args ...any) error {
	return New(op, rpma.CodeNoSupp, 0, format, args...)
}

// Provider returns an [*rpma.OpError] with [rpma.CodeProvider]
// (RPMA_E_PROVIDER) for the failing verbs or rdma_cm call op and the
// errno it reported.
func Provider(op string, errno syscall.Errno) error {
	return &rpma.OpError{Op: op, Code: rpma.CodeProvider, Errno: errno}
}
