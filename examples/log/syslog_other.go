//go:build windows || plan9

package main

import (
	"errors"
	"io"
	"runtime"
)

// openSyslog: Go's log/syslog does not exist on this system.
func openSyslog() (io.WriteCloser, error) {
	return nil, errors.New("log/syslog is not available on " + runtime.GOOS)
}
