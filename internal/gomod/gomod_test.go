package gomod

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requirements reads a go.mod's require directives: the direct ones and
// those marked // indirect.
func requirements(t *testing.T, gomod string) (direct, indirect []string) {
	b, err := os.ReadFile(gomod)
	require.NoError(t, err)
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		mod := strings.Fields(line)[0]
		if strings.Contains(line, "// indirect") {
			indirect = append(indirect, mod)
		} else {
			direct = append(direct, mod)
		}
	}
	return direct, indirect
}

// TestLibraryRequiresOnlyWhatItImports: a program that imports the library
// gets the project's chosen dependencies and nothing the examples or tools
// need (go list -m all of a user's module shows what go.mod lists).
func TestLibraryRequiresOnlyWhatItImports(t *testing.T) {
	direct, indirect := requirements(t, "../../go.mod")
	require.ElementsMatch(t, []string{
		"github.com/hashicorp/go-multierror",
		"github.com/stretchr/testify",
		"go.uber.org/zap",
		"golang.org/x/sys",
	}, direct, "the library's direct requirements")
	// What those need, as go mod tidy lists it; nothing for plots,
	// fonts, images or protobuf.
	require.ElementsMatch(t, []string{
		"github.com/hashicorp/errwrap",
		"go.uber.org/multierr",
		"go.yaml.in/yaml/v3",
	}, indirect, "the library's indirect requirements")
}

// TestWorkspaceJoinsTheModules: go.work puts the examples' and the
// plotting tool's modules beside the library, so that go build
// ./examples/... at the root and the scripts build them from this clone,
// and each of those modules says the same with a replace directive (for
// GOWORK=off).
func TestWorkspaceJoinsTheModules(t *testing.T) {
	b, err := os.ReadFile("../../go.work")
	require.NoError(t, err)
	var uses []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, ".") {
			uses = append(uses, line)
		}
	}
	require.ElementsMatch(t, []string{".", "./examples", "./internal/bench/cmd/benchplot"}, uses)
	for _, dir := range uses[1:] {
		direct, _ := requirements(t, "../../"+dir+"/go.mod")
		require.True(t, slices.Contains(direct, "github.com/gorpma/rpma"), "%s/go.mod requires the library", dir)
		mod, err := os.ReadFile("../../" + dir + "/go.mod")
		require.NoError(t, err)
		require.Contains(t, string(mod), "\nreplace github.com/gorpma/rpma => ", "%s/go.mod builds on this clone's library", dir)
	}
}
