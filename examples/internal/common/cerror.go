package common

import "fmt"

// CError returns an error whose text is the message of librpma's C
// example, verbatim (which may start with a capital letter, unlike Go's
// error strings).
func CError(format string, args ...any) error { return fmt.Errorf(format, args...) }
