//go:build !amd64

package tsc

import "time"

var origin = time.Now()

// Read returns the monotonic time since the package was loaded, in ns
// (this architecture's counter is not read directly).
func Read() uint64 { return uint64(time.Since(origin)) }
