//go:build !linux || (!cgo && !rpma_fake)

package ibv

// AsyncFD returns -1 in this build.
func (c *Context) AsyncFD() int { return -1 }

// Key returns 0 in this build.
func (c *Context) Key() uintptr { return 0 }

// GetAsyncEvent returns ErrNotSupported in this build.
func (c *Context) GetAsyncEvent() (AsyncEvent, error) { return AsyncEvent{}, ErrNotSupported }

// Key returns 0 in this build.
func (q *QP) Key() uintptr { return 0 }

// Key returns 0 in this build.
func (q *CQ) Key() uintptr { return 0 }

// Key returns 0 in this build.
func (s *SRQ) Key() uintptr { return 0 }
