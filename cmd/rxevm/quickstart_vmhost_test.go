//go:build linux && vmhost

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQuickStart runs README.md's "Quick start" block as it stands, from
// the repository's root (its builds go to bin/, which make test fills
// anyway), and checks that it prints what the README says it prints.
func TestQuickStart(t *testing.T) {
	section := readmeSection(t, "Quick start")
	_, script, ok := strings.Cut(section, "\n```sh\n")
	require.True(t, ok, "the section's commands")
	script, _, _ = strings.Cut(script, "\n```\n")
	const flush, client, server = "flush: persistent", "DURABLE-LOG goroutines=16 appended=512 missing=0", "log holds 512 records"
	said := strings.Join(strings.Fields(section), " ") // the README wraps lines
	for _, line := range []string{flush, client, server} {
		require.Contains(t, said, "`"+line+"`", "the README says what the quick start prints")
	}

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	run.Dir = root
	var stdout, stderr strings.Builder
	run.Stdout, run.Stderr = &stdout, &stderr
	start := time.Now()
	err = run.Run()
	t.Logf("in %v\nstdout:\n%s\nstderr:\n%s", time.Since(start), stdout.String(), stderr.String())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.ElementsMatch(t, []string{flush, client, server}, lines, "what the quick start prints")
}
