package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// commandStderr is rxevm's stderr less what rxevm itself reports when it
// boots a fresh VM after one that died booting (the dead guest's dmesg
// and the retry notice; a rare TCG early-boot oops, see vm.BootAttempts):
// what the command wrote. Nothing else is removed, and nothing at all
// when no boot was retried.
func commandStderr(s string) string {
	if !strings.Contains(s, "; booting a fresh VM (attempt ") {
		return s
	}
	var out strings.Builder
	inDmesg := false
	for _, l := range strings.SplitAfter(s, "\n") {
		switch {
		case strings.HasPrefix(l, "rxevm: --- ") && strings.Contains(l, "guest dmesg (last "):
			inDmesg = true
		case strings.HasPrefix(l, "rxevm: --- end of ") && strings.HasSuffix(l, "guest dmesg ---\n"):
			inDmesg = false
		case inDmesg, strings.HasPrefix(l, "rxevm: ") && strings.Contains(l, "; booting a fresh VM (attempt "):
		default:
			out.WriteString(l)
		}
	}
	return out.String()
}

func TestCommandStderr(t *testing.T) {
	// As a clean-clone make test saw it (dmesg shortened).
	retried := "rxevm: --- guest dmesg (last 3 lines) ---\n" +
		"  [    1.584602] Kernel panic - not syncing: Fatal exception in interrupt\n" +
		"  [    3.330709] Shutting down cpus with NMI\n" +
		"  [    3.331942] Kernel Offset: 0xf400000 from 0xffffffff81000000\n" +
		"rxevm: --- end of guest dmesg ---\n" +
		"rxevm: rxevm: the VM did not boot (qemu: <nil>); booting a fresh VM (attempt 2 of 3)\n" +
		"to-err\n"
	require.Equal(t, "to-err\n", commandStderr(retried))
	// A two-node run whose node 1 crashed (the label names the node).
	retried = "rxevm: --- node 1: guest dmesg (last 1 lines) ---\n" +
		"  [    3.229775] Kernel panic - not syncing: Fatal exception in interrupt\n" +
		"rxevm: --- end of node 1: guest dmesg ---\n" +
		"rxevm: node 1: the VM did not boot (qemu: <nil>); booting a fresh VM (attempt 2 of 3)\n" +
		"to-err\n"
	require.Equal(t, "to-err\n", commandStderr(retried))
	// Without a retry nothing is taken away, rxevm's own lines included.
	for _, s := range []string{"to-err\n", "rxevm: --- guest dmesg (last 1 lines) ---\n  x\nrxevm: --- end of guest dmesg ---\nto-err\n"} {
		require.Equal(t, s, commandStderr(s))
	}
}
