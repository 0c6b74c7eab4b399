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

// TestWriteFailuresKeepsWhy: a failed assertion's reason is repeated
// after the tail even when later output (a cleanup's dmesg) pushed it
// out of the tail; its stack and its diff are not.
func TestWriteFailuresKeepsWhy(t *testing.T) {
	tl := &tail{}
	for _, l := range []string{
		"=== RUN   TestX\n",
		"    x_test.go:12: \n",
		"        \tError Trace:\t/work/x_test.go:12\n",
		"        \t            \t/work/y_test.go:40\n",
		"        \tError:      \tNot equal: \n",
		"        \t            \texpected: \"flushed\"\n",
		"        \t            \tactual  : \"peer-timeout\"\n",
		"        \t            \t\n",
		"        \t            \tDiff:\n",
		"        \t            \t-flushed\n",
		"        \tTest:       \tTestX\n",
		"        \tMessages:   \tcase timeout-idle ended with peer-timeout\n",
		"        \t            \tafter 2.1s\n",
	} {
		tl.add(l)
	}
	for i := 0; i < 3*tailLines; i++ {
		tl.add("    x_test.go:10: dmesg line\n")
	}
	path := filepath.Join(t.TempDir(), "tally.failures")
	writeFailures(path, "vm", []string{"a.TestX"}, nil, map[string]*tail{"a.TestX": tl})
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	require.Contains(t, s, "why a.TestX failed")
	why := s[strings.Index(s, "why a.TestX failed"):]
	for _, want := range []string{"Not equal", `actual  : "peer-timeout"`, "case timeout-idle ended", "after 2.1s"} {
		require.Contains(t, why, want)
	}
	for _, not := range []string{"Error Trace", "y_test.go", "Diff:", "-flushed", "Test:", "dmesg line"} {
		require.NotContains(t, why, not)
	}
	require.Equal(t, tailLines, strings.Count(s, "dmesg line"), "the tail is still kept")
}

func TestSlowest(t *testing.T) {
	ts := []timed{
		{"example.com/m/a", "TestQuick", 1},
		{"example.com/m/b", "TestSlow", 90},
		{"example.com/m/b", "TestSlow/sub", 89},
		{"example.com/m/a", "TestMiddle", 12.4},
	}
	require.Equal(t, "b.TestSlow 90s, a.TestMiddle 12s", slowest(ts, 2))
	require.Equal(t, "b.TestSlow 90s, a.TestMiddle 12s, a.TestQuick 1s", slowest(ts, 8))
	require.Equal(t, "", slowest(nil, 8))
}

func TestPrefixer(t *testing.T) {
	var b strings.Builder
	p := &prefixer{w: &b, tier: "vm-6.12"}
	p.write("github.com/gorpma/rpma/conn", "=== RUN   TestA\n", 0, 0)
	p.write("github.com/gorpma/rpma/conn", "partial ", 0, 0)
	p.write("github.com/gorpma/rpma/conn", "line\n--- PASS: TestA (1.20s)\n", 0, 0)
	p.write("github.com/gorpma/rpma/internal/core", "--- FAIL: TestB (0.01s)\n", 1, 1)
	p.write("github.com/gorpma/rpma", "ok\n", 1, 1)
	require.Equal(t, "vm-6.12 conn (0 passed) | === RUN   TestA\n"+
		"vm-6.12 conn (0 passed) | partial line\n"+
		"vm-6.12 conn (0 passed) | --- PASS: TestA (1.20s)\n"+
		"vm-6.12 internal/core (1 passed, 1 failed) | --- FAIL: TestB (0.01s)\n"+
		"vm-6.12 . (1 passed, 1 failed) | ok\n", b.String())
}
