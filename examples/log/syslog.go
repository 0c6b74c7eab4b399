//go:build !windows && !plan9

package main

import (
	"io"
	"log/syslog"
)

// openSyslog connects to the system log, tagged "rpma".
func openSyslog() (io.WriteCloser, error) {
	return syslog.New(syslog.LOG_USER|syslog.LOG_DEBUG, "rpma")
}
