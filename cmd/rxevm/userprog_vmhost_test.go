//go:build linux && vmhost

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUserProgram follows README.md's "Your own program on Soft-RoCE" as
// a user would: the worked example's main.go, in a module of its own
// outside this one (it requires the library through a replace directive
// to this clone, and uses nothing from examples/internal), built with go
// build and run with the README's rxevm command line, with rxevm built
// from that module as go run would, which must print what the README
// says.
func TestUserProgram(t *testing.T) {
	section := readmeSection(t, "Your own program on Soft-RoCE")
	_, code, ok := strings.Cut(section, "\n```go\n")
	require.True(t, ok, "the section's Go code")
	code, _, _ = strings.Cut(code, "\n```\n")
	var runLine string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "rxevm ") {
			runLine = line
		}
	}
	require.NotEmpty(t, runLine, "the section's rxevm command line")
	for _, want := range []string{"appended 3 records, each durable before the next", "the log holds [one two three]"} {
		require.Contains(t, section, want, "the README says what it prints")
	}

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir() // under the host's temp dir, which the VM shares
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(code+"\n"), 0o644))
	gomod := "module example.com/replog\n\ngo 1.26.0\n\nrequire github.com/gorpma/rpma v0.0.0\n\nreplace github.com/gorpma/rpma => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", "replog", ".")
	build.Dir = dir
	// Offline: what the module needs is the library's own requirements,
	// already in the module cache and in the copied go.sum.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build of the user's module:\n%s", out)
	// rxevm as the README's "go run github.com/gorpma/rpma/cmd/rxevm"
	// gets it from the user's module: the same resolution, built once.
	build = exec.CommandContext(ctx, "go", "build", "-o", "rxevm", "github.com/gorpma/rpma/cmd/rxevm")
	build.Dir, build.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err = build.CombinedOutput()
	require.NoError(t, err, "rxevm from the user's module:\n%s", out)

	run := exec.CommandContext(ctx, "sh", "-c", "./rxevm"+strings.TrimPrefix(runLine, "rxevm"))
	run.Dir = dir
	var stdout, stderr strings.Builder
	run.Stdout, run.Stderr = &stdout, &stderr
	start := time.Now()
	err = run.Run()
	t.Logf("%s\nin %v\nstdout:\n%s\nstderr:\n%s", runLine, time.Since(start), stdout.String(), stderr.String())
	require.NoError(t, err)
	require.Equal(t, "appended 3 records, each durable before the next\nthe log holds [one two three]\n", stdout.String())
}

// readmeSection returns the text of README.md's section under the heading
// "## title", up to the next such heading.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## "+title+"\n")
	require.True(t, ok, "README.md has a section %q", title)
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}
