//go:build !linux || (!cgo && !rpma_fake)

package ibv

// Crossing does nothing: this build has no C to cross into.
func Crossing() {}
