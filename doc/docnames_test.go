package doc_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pkgDirs maps the package names that documentation writes as pkg.Name
// to their folders under the module root: the public packages by their
// own names, and the internal ones the architecture describes.
var pkgDirs = map[string]string{
	"rpma": "rpma", "peer": "peer", "ep": "ep", "conn": "conn", "mr": "mr",
	"cq": "cq", "srq": "srq", "pmem": "pmem", "session": "session",
	"core": "internal/core", "ibv": "internal/ibv", "leak": "internal/leak",
	"rdmatest": "internal/rdmatest", "cpuflush": "internal/cpuflush",
	"regmem": "internal/regmem", "vm": "internal/vm",
}

// docName matches pkg.Name and pkg.Type.Member for the packages above,
// also behind the module's import path (doc links such as
// [github.com/gorpma/rpma/conn.Conn.Flush]).
var docName = regexp.MustCompile(`(?:github\.com/gorpma/rpma/(?:internal/)?)?\b(` + pkgAlternation() + `)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

func pkgAlternation() string {
	names := make([]string, 0, len(pkgDirs))
	for name := range pkgDirs {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

// docNames returns the pkg.Name references in text, each with its line.
func docNames(text string) map[string]int {
	out := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		for _, m := range docName.FindAllStringSubmatchIndex(line, -1) {
			// Not a reference when preceded by a word character or a
			// slash (a path such as examples/internal/common.X) or a
			// dot (a longer selector, like x.conn.Conn).
			if s := m[2]; s > 0 && m[0] == s && strings.ContainsAny(line[s-1:s], "/._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") {
				continue
			}
			id := line[m[2]:m[3]] + "." + line[m[4]:m[5]]
			if m[6] >= 0 {
				id += "." + line[m[6]:m[7]]
			}
			if _, seen := out[id]; !seen {
				out[id] = i + 1
			}
		}
	}
	return out
}

// TestDocNames: every pkg.Name and pkg.Type.Member that the Markdown
// documentation (doc/*.md, the READMEs) or any comment of the module's Go
// files names resolves to a declaration, so no document names an
// identifier that does not exist (as doc/persistence.md once named a
// usage flag by a name it never had).
func TestDocNames(t *testing.T) {
	cache := map[string]*pkgDecls{}
	check := func(where string, names map[string]int) {
		for id, line := range names {
			if !resolveAny(t, cache, id) {
				t.Errorf("%s:%d: %s does not resolve", where, line, id)
			}
		}
	}
	mds, err := filepath.Glob("*.md")
	require.NoError(t, err)
	mds = append(mds, "../README.md", "../examples/README.md", "../examples/internal/common/EXAMPLES.md")
	for _, md := range mds {
		b, err := os.ReadFile(md)
		require.NoError(t, err)
		check(md, docNames(string(b)))
	}

	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, cg := range f.Comments {
			names := docNames(cg.Text())
			for id, l := range names {
				names[id] = fset.Position(cg.Pos()).Line + l - 1
			}
			check(path, names)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk found the module's Go files")
}

// resolveAny is resolve for any package of pkgDirs.
func resolveAny(t *testing.T, cache map[string]*pkgDecls, ident string) bool {
	parts := strings.Split(ident, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	dir, ok := pkgDirs[parts[0]]
	if !ok {
		return false
	}
	d, ok := cache[dir]
	if !ok {
		d = parsePkg(t, filepath.Join("..", dir))
		cache[dir] = d
	}
	if !d.top[parts[1]] {
		return false
	}
	if len(parts) == 2 || d.members[parts[1]][parts[2]] {
		return true
	}
	// A member of an alias (cq.WC = rpma.WC) is its target's.
	if target, ok := d.aliases[parts[1]]; ok {
		return resolveAny(t, cache, target+"."+parts[2])
	}
	return false
}

func TestDocNamesFinds(t *testing.T) {
	got := docNames("see [conn.Conn.Flush], `mr.UsageFlushPersistent`, github.com/gorpma/rpma/pmem.Map,\n" +
		"not examples/internal/common.CommonData, x.conn.Conn, nor myconn.Conn or conn.go; rpma.ErrProvider's")
	require.Equal(t, map[string]int{"conn.Conn.Flush": 1, "mr.UsageFlushPersistent": 1, "pmem.Map": 1, "rpma.ErrProvider": 2}, got)
	cache := map[string]*pkgDecls{}
	require.True(t, resolveAny(t, cache, "core.ConnReq"))
	require.True(t, resolveAny(t, cache, "session.Offer.MarshalBinary"))
	require.False(t, resolveAny(t, cache, "mr.UsageFlushTypePersistent"))
	require.False(t, resolveAny(t, cache, "conn.Conn.NoSuch"))
	require.True(t, resolveAny(t, cache, "cq.WC.Err"), "through the alias cq.WC = rpma.WC")
	require.False(t, resolveAny(t, cache, "cq.WC.NoSuch"))
}
