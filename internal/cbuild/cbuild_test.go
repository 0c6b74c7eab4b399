package cbuild_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/cbuild"
)

// fakeCC writes a compiler that records each call in the file it returns
// and writes, as its output, a script printing its arguments.
func fakeCC(t *testing.T) (cc, calls string) {
	t.Helper()
	dir := t.TempDir()
	cc, calls = filepath.Join(dir, "cc"), filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$*" >>` + calls + `
case " $* " in *" -DFAIL "*) echo "error: told to fail" >&2; exit 1;; esac
out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '#!/bin/sh\necho built\n' >"$out" && chmod +x "$out"
`
	require.NoError(t, os.WriteFile(cc, []byte(script), 0o755))
	return cc, calls
}

func countCalls(t *testing.T, calls string) int {
	t.Helper()
	b, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// srcDir holds a program and a header it includes.
func srcDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.c"), []byte("#include \"h.h\"\nint main(void) { return N; }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "h.h"), []byte("#define N 0\n"), 0o644))
	return dir
}

func TestBuildWithoutCacheCompilesEachTime(t *testing.T) {
	t.Setenv(cbuild.EnvCache, "")
	cc, calls := fakeCC(t)
	p := cbuild.Program{Name: "p", Dir: srcDir(t), Srcs: []string{"p.c"}, Args: []string{"-O2"}, Libs: []string{"-lrpma"}}
	for i := 1; i <= 2; i++ {
		bin, cached, err := cbuild.Build(context.Background(), cc, p, t.TempDir())
		require.NoError(t, err)
		require.False(t, cached)
		out, err := exec.Command(bin).Output()
		require.NoError(t, err)
		require.Equal(t, "built\n", string(out))
		require.Equal(t, i, countCalls(t, calls))
	}
	b, err := os.ReadFile(calls)
	require.NoError(t, err)
	require.Contains(t, string(b), "-O2 -o ", "the arguments, then the output")
	require.Contains(t, string(b), "p.c -lrpma\n", "the sources, then the libraries")
}

func TestBuildReusesWhatWentInUnchanged(t *testing.T) {
	t.Setenv(cbuild.EnvCache, t.TempDir())
	cc, calls := fakeCC(t)
	dir := srcDir(t)
	p := cbuild.Program{Name: "p", Dir: dir, Srcs: []string{"p.c"}, Args: []string{"-O2"}}
	build := func() (string, bool) {
		bin, cached, err := cbuild.Build(context.Background(), cc, p, t.TempDir())
		require.NoError(t, err)
		out, err := exec.Command(bin).Output()
		require.NoError(t, err, "the binary runs, from the cache or not")
		require.Equal(t, "built\n", string(out))
		return bin, cached
	}

	_, cached := build()
	require.False(t, cached)
	bin, cached := build()
	require.True(t, cached, "the same program again")
	require.Equal(t, 1, countCalls(t, calls))
	require.Equal(t, filepath.Join(os.Getenv(cbuild.EnvCache), filepath.Base(filepath.Dir(bin)), "p"), bin)

	// Each input changed misses, and is then cached in its turn.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "h.h"), []byte("#define N 1\n"), 0o644))
	_, cached = build()
	require.False(t, cached, "a header of the sources' directory changed")
	p.Args = []string{"-O0"}
	_, cached = build()
	require.False(t, cached, "another argument")
	p.Libs = []string{"-lm"}
	_, cached = build()
	require.False(t, cached, "another library")
	require.Equal(t, 4, countCalls(t, calls))
	_, cached = build()
	require.True(t, cached)
	require.Equal(t, 4, countCalls(t, calls))
}

func TestBuildInlineSource(t *testing.T) {
	t.Setenv(cbuild.EnvCache, t.TempDir())
	cc, calls := fakeCC(t)
	p := cbuild.Program{Name: "q", Source: "int main(void) { return 0; }\n"}
	_, cached, err := cbuild.Build(context.Background(), cc, p, t.TempDir())
	require.NoError(t, err)
	require.False(t, cached)
	_, cached, err = cbuild.Build(context.Background(), cc, p, t.TempDir())
	require.NoError(t, err)
	require.True(t, cached)
	p.Source = "int main(void) { return 1; }\n"
	_, cached, err = cbuild.Build(context.Background(), cc, p, t.TempDir())
	require.NoError(t, err)
	require.False(t, cached, "another text")
	require.Equal(t, 2, countCalls(t, calls))
}

// A cache that cannot be written costs a compilation, not the build.
func TestBuildUnwritableCache(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	t.Setenv(cbuild.EnvCache, filepath.Join(notDir, "cache"))
	cc, calls := fakeCC(t)
	p := cbuild.Program{Name: "p", Dir: srcDir(t), Srcs: []string{"p.c"}}
	for range 2 {
		bin, cached, err := cbuild.Build(context.Background(), cc, p, t.TempDir())
		require.NoError(t, err)
		require.False(t, cached)
		require.FileExists(t, bin)
	}
	require.Equal(t, 2, countCalls(t, calls))
}

func TestBuildFailureNamesTheSourceAndNothingIsCached(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(cbuild.EnvCache, cache)
	cc, _ := fakeCC(t)
	p := cbuild.Program{Name: "p", Dir: srcDir(t), Srcs: []string{"p.c"}, Args: []string{"-DFAIL"}}
	_, _, err := cbuild.Build(context.Background(), cc, p, t.TempDir())
	require.ErrorContains(t, err, "p.c")
	require.ErrorContains(t, err, "told to fail")
	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	require.Empty(t, entries)

	_, _, err = cbuild.Build(context.Background(), cc, cbuild.Program{Name: "p"}, t.TempDir())
	require.ErrorContains(t, err, "needs a name and sources")
}

// The real compiler, where there is one: the cached binary is a program
// that runs.
func TestBuildRealCompiler(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no cc on PATH")
	}
	t.Setenv(cbuild.EnvCache, t.TempDir())
	p := cbuild.Program{Name: "hello", Source: "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n", Args: []string{"-O2", "-Wall", "-Werror"}}
	for _, want := range []bool{false, true} {
		bin, cached, err := cbuild.Build(context.Background(), cc, p, t.TempDir())
		require.NoError(t, err)
		require.Equal(t, want, cached)
		out, err := exec.Command(bin).Output()
		require.NoError(t, err)
		require.Equal(t, "hello\n", string(out))
	}
}
