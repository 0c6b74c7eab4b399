//go:build linux

package vm

import "fmt"

// PrepareError reports that the VM could not be prepared or booted. Hint,
// when set, tells the user how to fix it (which package to install).
type PrepareError struct {
	Step string
	Err  error
	Hint string
}

func (e *PrepareError) Error() string {
	s := fmt.Sprintf("rxevm: %s: %v", e.Step, e.Err)
	if e.Hint != "" {
		s += "\n  hint: " + e.Hint
	}
	return s
}

func (e *PrepareError) Unwrap() error { return e.Err }

func prepErr(step string, err error, hint string) error {
	return &PrepareError{Step: step, Err: err, Hint: hint}
}
