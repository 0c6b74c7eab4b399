//go:build linux && cgo && !rpma_fake

package ibv

/*
static void rpma_nothing(void) {}
*/
import "C"

// Crossing calls a C function that does nothing: one crossing from Go into
// C and back, at its bare cost, with the cgo annotations of the data path's
// calls (none). The benchmarks measure it (conn's BenchmarkCrossing) to
// tell what the crossings of an operation cost from what the rest of the
// Go code does.
func Crossing() { C.rpma_nothing() }
