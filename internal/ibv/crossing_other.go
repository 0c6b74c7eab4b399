//go:build !linux || !cgo

package ibv

// Crossing does nothing: this build has no C to cross into.
func Crossing() {}
