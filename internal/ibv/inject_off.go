//go:build (!rpma_inject || !linux || !cgo) && !(rpma_fake && linux)

package ibv

import "syscall"

// InjectBuild reports whether this build has fault injection (the build
// tag rpma_inject, on Linux with cgo). It has not.
const InjectBuild = false

// InjectGo reports the errno that Go site site (a GoSite constant) must
// fail with: always 0 in this build.
func InjectGo(site int) syscall.Errno { return 0 }
