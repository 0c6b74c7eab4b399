package leak

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/gorpma/rpma/internal/ibv"
)

// What a whole process holds, beyond the objects Track records: its open
// file descriptors and the C objects of package ibv still alive. Tests
// that tear down after a failure (fault injection, a vanished peer) take
// a Snapshot before and compare one after.

// OpenFDs counts the process's open file descriptors, less those that
// come and go with the child processes a test runs (os/exec's pipes,
// pidfds and /dev/null), which may still be open at the count. It returns
// -1 where /proc/self/fd cannot be read.
func OpenFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		t, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if strings.HasPrefix(t, "pipe:") || t == "anon_inode:[pidfd]" || t == "/dev/null" {
			continue
		}
		n++
	}
	return n
}

// Snapshot is what the process holds at one moment.
type Snapshot struct {
	Objects  int              // tracked objects (Count)
	FDs      int              // OpenFDs
	CObjects map[string]int64 // ibv.LiveObjects: live C objects by kind
}

// Take returns the process's Snapshot now.
func Take() Snapshot {
	return Snapshot{Objects: Count(), FDs: OpenFDs(), CObjects: ibv.LiveObjects()}
}

// Grown describes what s holds beyond base ("" when nothing): more
// tracked objects, fds or C objects of any kind.
func (s Snapshot) Grown(base Snapshot) string {
	var out []string
	if d := s.Objects - base.Objects; d > 0 {
		out = append(out, fmt.Sprintf("objects +%d", d))
	}
	if d := s.FDs - base.FDs; d > 0 {
		out = append(out, fmt.Sprintf("fds +%d", d))
	}
	for k, v := range s.CObjects {
		if d := v - base.CObjects[k]; d > 0 {
			out = append(out, fmt.Sprintf("%s +%d", k, d))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
