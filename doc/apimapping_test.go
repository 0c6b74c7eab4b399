// Package doc_test checks doc/api-mapping.md against the librpma function
// list and the Go source of the module.
package doc_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pkgDecls is what a package declares: top-level names, and for each type
// its methods and struct fields.
type pkgDecls struct {
	top     map[string]bool
	members map[string]map[string]bool // type -> method or field
	aliases map[string]string          // type -> "pkg.Type" it is an alias of
}

func parsePkg(t *testing.T, dir string) *pkgDecls {
	t.Helper()
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	d := &pkgDecls{top: map[string]bool{}, members: map[string]map[string]bool{}, aliases: map[string]string{}}
	member := func(typ, name string) {
		if d.members[typ] == nil {
			d.members[typ] = map[string]bool{}
		}
		d.members[typ][name] = true
	}
	n := 0
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		n++
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.top[decl.Name.Name] = true
					continue
				}
				typ := decl.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						d.top[spec.Name.Name] = true
						if sel, ok := spec.Type.(*ast.SelectorExpr); ok && spec.Assign.IsValid() {
							if pkg, ok := sel.X.(*ast.Ident); ok {
								d.aliases[spec.Name.Name] = pkg.Name + "." + sel.Sel.Name
							}
						}
						if st, ok := spec.Type.(*ast.StructType); ok {
							for _, f := range st.Fields.List {
								for _, name := range f.Names {
									member(spec.Name.Name, name.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, name := range spec.Names {
							d.top[name.Name] = true
						}
					}
				}
			}
		}
	}
	require.NotZero(t, n, "no Go files in %s", dir)
	return d
}

// resolve reports whether ident (pkg.Name, pkg.Type.Member) is declared
// and exported.
func resolve(t *testing.T, cache map[string]*pkgDecls, ident string) bool {
	for _, part := range strings.Split(ident, ".")[1:] {
		if !ast.IsExported(part) {
			return false
		}
	}
	return resolveAny(t, cache, ident)
}

var backticked = regexp.MustCompile("`([^`]+)`")

func TestAPIMapping(t *testing.T) {
	// The librpma functions.
	f, err := os.Open("librpma-functions.txt")
	require.NoError(t, err)
	defer f.Close()
	var funcs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			funcs = append(funcs, s)
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, funcs, 84)

	// The table rows.
	md, err := os.ReadFile("api-mapping.md")
	require.NoError(t, err)
	rows := map[string]int{}
	cache := map[string]*pkgDecls{}
	var order []string
	for i, line := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(line, "| `rpma_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 3, "line %d: want 3 columns: %s", i+1, line)
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		goCol := strings.TrimSpace(cells[1])
		notes := strings.TrimSpace(cells[2])
		rows[name]++
		order = append(order, name)

		switch {
		case goCol == "—":
			require.NotEmpty(t, notes, "%s: a row without counterpart needs a reason", name)
		default:
			ids := backticked.FindAllStringSubmatch(goCol, -1)
			require.NotEmpty(t, ids, "%s: no identifier in %q", name, goCol)
			rest := backticked.ReplaceAllString(goCol, "")
			require.Empty(t, strings.Trim(rest, ", "), "%s: text outside identifiers in %q", name, goCol)
			for _, m := range ids {
				require.True(t, resolve(t, cache, m[1]), "%s: %s does not resolve", name, m[1])
			}
		}
	}

	// Exactly one row per function, nothing else.
	for _, fn := range funcs {
		require.Equal(t, 1, rows[fn], "%s: rows", fn)
	}
	require.Len(t, rows, len(funcs), "rows for functions not in the list")
	require.True(t, sort.StringsAreSorted(order), "rows in the list's order")

	// The verbs rows below librpma's (issue 6) resolve too.
	for _, fn := range []string{"ibv_resize_cq", "rdma_get_send_comp", "rdma_get_recv_comp"} {
		found := false
		for _, line := range strings.Split(string(md), "\n") {
			if !strings.HasPrefix(line, "| `"+fn+"`") {
				continue
			}
			found = true
			cells := strings.Split(strings.Trim(line, "|"), "|")
			require.Len(t, cells, 3, line)
			ids := backticked.FindAllStringSubmatch(cells[1], -1)
			require.NotEmpty(t, ids, line)
			for _, m := range ids {
				require.True(t, resolve(t, cache, m[1]), "%s: %s does not resolve", fn, m[1])
			}
		}
		require.True(t, found, "row for %s", fn)
	}
	// Identifiers elsewhere in the notes and the sections below resolve
	// too: TestDocNames checks every Markdown file.
}

func TestResolve(t *testing.T) {
	cache := map[string]*pkgDecls{}
	require.True(t, resolve(t, cache, "conn.Config.Timeout"))
	require.True(t, resolve(t, cache, "conn.Conn.NextEvent"))
	require.True(t, resolve(t, cache, "ep.Listen"))
	require.False(t, resolve(t, cache, "conn.Config.NoSuchField"))
	require.False(t, resolve(t, cache, "conn.NoSuch"))
	require.False(t, resolve(t, cache, "nosuchpkg.X"))
	require.False(t, resolve(t, cache, "conn"))
	require.False(t, resolve(t, cache, "conn.Conn.core"), "unexported")
}
