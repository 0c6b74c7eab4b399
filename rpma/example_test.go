package rpma_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/gorpma/rpma/rpma"
)

// Errors are matched with errors.Is and errors.As, through any wrapping:
// an *rpma.OpError against the sentinel of its librpma code and against
// its errno; a failed completion (*rpma.WCError) against ErrCompletion
// and its status; the end of a connection seen by a wait
// (*rpma.ConnEventError) against ErrConnBroken.
func Example_errors() {
	// What mr.Reg returns when the locked-memory limit refuses a
	// registration, wrapped as a caller would.
	err := fmt.Errorf("registering the log: %w",
		&rpma.OpError{Op: "ibv_reg_mr", Code: rpma.CodeProvider, Errno: syscall.ENOMEM, Msg: "see RLIMIT_MEMLOCK"})
	fmt.Println(errors.Is(err, rpma.ErrProvider), errors.Is(err, syscall.ENOMEM), errors.Is(err, rpma.ErrInvalidArgument))
	var oe *rpma.OpError
	if errors.As(err, &oe) {
		fmt.Printf("%s failed: %s (%d)\n", oe.Op, oe.Code, oe.Code)
	}

	// A failed completion, as cq.WC.Err returns it.
	var wcErr error = &rpma.WCError{Status: rpma.WCWRFlushErr, WRID: 7}
	fmt.Println(errors.Is(wcErr, rpma.ErrCompletion), errors.Is(wcErr, rpma.ErrWRFlushed),
		errors.Is(wcErr, &rpma.WCError{Status: rpma.WCRemAccessErr}))
	var we *rpma.WCError
	if errors.As(wcErr, &we) {
		fmt.Println("op context", we.WRID, "status", we.Status)
	}

	// A completion wait ended by the other side's hang-up.
	waitErr := fmt.Errorf("waiting: %w", &rpma.ConnEventError{Event: rpma.ConnClosed})
	var ce *rpma.ConnEventError
	fmt.Println(errors.Is(waitErr, rpma.ErrConnBroken), errors.As(waitErr, &ce) && ce.Event == rpma.ConnClosed)

	// A wait ends with its context's error when its deadline passes.
	fmt.Println(errors.Is(fmt.Errorf("wait: %w", context.DeadlineExceeded), context.DeadlineExceeded))
	// Output:
	// true true false
	// ibv_reg_mr failed: Provider error occurred (-100002)
	// true true false
	// op context 7 status Work Request Flushed Error
	// true true
	// true
}

// CodeOf gives back the librpma code an error carries, as a C caller
// would see it returned.
func ExampleCodeOf() {
	err := fmt.Errorf("posting: %w", rpma.ErrQueueFull)
	code, ok := rpma.CodeOf(err)
	fmt.Println(code, ok, errors.Is(err, rpma.ErrProvider))
	_, ok = rpma.CodeOf(rpma.ErrConnBroken)
	fmt.Println(ok)
	// Output:
	// Provider error occurred true true
	// false
}
