//go:build !race

package conn_test

// raceEnabled: the test binary runs under the race detector, whose
// instrumentation changes what allocates.
const raceEnabled = false
