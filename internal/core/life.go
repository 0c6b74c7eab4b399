package core

import (
	"sync"
	"sync/atomic"
)

// life is the lifecycle of an object: operations run between enter and
// exit (shared), Close runs between beginClose and the exclusive lock.
// Close wakes blocked waiters before taking the lock, so a long wait never
// holds Close up.
type life struct {
	mu      sync.RWMutex
	closing atomic.Bool
}

// enter starts an operation. It reports false, holding nothing, when the
// object is closed or closing.
func (l *life) enter() bool {
	l.mu.RLock()
	if l.closing.Load() {
		l.mu.RUnlock()
		return false
	}
	return true
}

// exit ends an operation started by a successful enter.
func (l *life) exit() { l.mu.RUnlock() }

// beginClose marks the object closing. It reports false when another Close
// (or a consuming operation) got there first.
func (l *life) beginClose() bool { return l.closing.CompareAndSwap(false, true) }

// closed reports whether the object is closed or closing.
func (l *life) closed() bool { return l.closing.Load() }

// lock waits for the operations in flight and blocks new ones.
func (l *life) lock() { l.mu.Lock() }

// unlock releases lock.
func (l *life) unlock() { l.mu.Unlock() }
