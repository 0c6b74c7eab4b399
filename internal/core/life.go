package core

import (
	"sync"
	"sync/atomic"
)

// life is the lifecycle of an object: operations run between enter and
// exit (shared), Close runs between beginClose and the exclusive lock.
// Close wakes blocked waiters before taking the lock, so a long wait never
// holds Close up.
//
// The zero value is an object that was never opened: a zero-value
// object (new(conn.Conn), for example) behaves as a closed one, so no
// method of it reaches C with its nil handles. Constructors call open.
type life struct {
	mu    sync.RWMutex
	state atomic.Int32 // lifeNew, lifeOpen or lifeClosing
}

const (
	lifeNew     = iota // the zero value: never opened
	lifeOpen           // usable
	lifeClosing        // Close (or a consuming operation) has begun
)

// open marks a newly built object usable.
func (l *life) open() { l.state.Store(lifeOpen) }

// enter starts an operation. It reports false, holding nothing, when the
// object is closed, closing or was never opened.
func (l *life) enter() bool {
	l.mu.RLock()
	if l.state.Load() != lifeOpen {
		l.mu.RUnlock()
		return false
	}
	return true
}

// exit ends an operation started by a successful enter.
func (l *life) exit() { l.mu.RUnlock() }

// beginClose marks the object closing. It reports false when another Close
// (or a consuming operation) got there first, or the object was never
// opened.
func (l *life) beginClose() bool { return l.state.CompareAndSwap(lifeOpen, lifeClosing) }

// closed reports whether the object is closed, closing or was never
// opened.
func (l *life) closed() bool { return l.state.Load() != lifeOpen }

// markClosed marks an object closed under its exclusive lock (for objects
// whose Close decides, under the lock, whether to close at all).
func (l *life) markClosed() { l.state.Store(lifeClosing) }

// lock waits for the operations in flight and blocks new ones.
func (l *life) lock() { l.mu.Lock() }

// unlock releases lock.
func (l *life) unlock() { l.mu.Unlock() }
