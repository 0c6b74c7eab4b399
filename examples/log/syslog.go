//go:build !windows && !plan9

package main

import (
	"io"
	"log/syslog"
)

// openSyslog connects to the system log, tagged "rpma". Without one it
// returns a nil io.WriteCloser, not a nil *syslog.Writer in a non-nil
// interface.
func openSyslog() (io.WriteCloser, error) {
	w, err := syslog.New(syslog.LOG_USER|syslog.LOG_DEBUG, "rpma")
	if err != nil {
		return nil, err
	}
	return w, nil
}
