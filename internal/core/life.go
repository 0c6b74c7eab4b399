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
	state atomic.Int32 // lifeNew, lifeOpen, lifeClosing or lifeCloseFailed
}

const (
	lifeNew         = iota // the zero value: never opened
	lifeOpen               // usable
	lifeClosing            // Close (or a consuming operation) has begun
	lifeCloseFailed        // a Close failed part way: unusable, but Close may be retried
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
// opened. After a failed Close (closeFailed) it reports true again, so
// that Close can be retried.
func (l *life) beginClose() bool {
	return l.state.CompareAndSwap(lifeOpen, lifeClosing) || l.state.CompareAndSwap(lifeCloseFailed, lifeClosing)
}

// consume marks the object closing for an operation that uses it up (a
// request's Connect): unlike beginClose, never after a failed Close.
func (l *life) consume() bool { return l.state.CompareAndSwap(lifeOpen, lifeClosing) }

// closeFailed records, under the exclusive lock, that a step of Close
// failed: the object keeps what it could not destroy, no operation may
// use it, and the next Close tries again.
func (l *life) closeFailed() { l.state.Store(lifeCloseFailed) }

// finished reports whether Close has run to its end (or the object was
// never opened): for Close methods that decide under the lock.
func (l *life) finished() bool {
	s := l.state.Load()
	return s == lifeNew || s == lifeClosing
}

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
