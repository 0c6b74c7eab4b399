//go:build linux

package vm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBootHungFindsTheVMThatDidNotReachItsCommand: a VM is hung while it
// has written none of started, ready, status or boot-error and neither
// ended nor was killed.
func TestBootHungFindsTheVMThatDidNotReachItsCommand(t *testing.T) {
	ms := []*Machine{heldMachine(t, 0), heldMachine(t, 1)}
	require.Same(t, ms[0], bootHung(ms), "neither VM reached its command")

	for _, f := range []string{ctlReady, ctlStarted, ctlStatus, ctlBootError} {
		require.NoError(t, os.WriteFile(filepath.Join(ms[0].runDir, f), nil, 0o644))
		require.Same(t, ms[1], bootHung(ms), "node 0 wrote %s", f)
		require.NoError(t, os.Remove(filepath.Join(ms[0].runDir, f)))
	}

	close(ms[0].done)
	require.Same(t, ms[1], bootHung(ms), "node 0 ended: not hung")
	ms[1].killed = true
	require.Nil(t, bootHung(ms), "node 1 was killed: not hung")
}
