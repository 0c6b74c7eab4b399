package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteFailures: a failed leaf's tail is kept and its package's tail
// (which holds only the guest's dmesg then) is not; a package that failed
// without a failed test keeps its tail, ahead of the tests'.
func TestWriteFailures(t *testing.T) {
	out := map[string]*tail{}
	add := func(k string, lines ...string) {
		out[k] = &tail{}
		for _, l := range lines {
			out[k].add(l + "\n")
		}
	}
	add("a.TestX/sub", "    x_test.go:10: the reason")
	add("a.TestX", "--- FAIL: TestX")
	add("a.", "dmesg of a")
	add("b.", "panic: test timed out")
	path := filepath.Join(t.TempDir(), "tally.failures")
	writeFailures(path, "vm", []string{"a.TestX/sub", "a.TestX"}, []string{"a", "b"}, out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	require.Contains(t, s, "the reason")
	require.NotContains(t, s, "dmesg of a")
	require.NotContains(t, s, "--- FAIL: TestX", "a parent's tail is not repeated")
	require.Less(t, strings.Index(s, "panic: test timed out"), strings.Index(s, "the reason"), "the tests' tails end the file")
}
