package doc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// publicPkgs are the packages users import: each exported function and
// method of theirs carries the user's documentation.
var publicPkgs = []string{"rpma", "peer", "ep", "conn", "mr", "cq", "srq", "pmem"}

// goFuncs are the function declarations of the Go files of dir (every
// build variant, no tests), by "Name" for functions and "Recv.Name" for
// methods, and the types that dir defines over core's (a type whose
// definition is a core type, or a struct of one: T to that type's name).
func goFuncs(t *testing.T, dir string) (funcs map[string]*ast.FuncDecl, overCore map[string]string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("..", dir))
	require.NoError(t, err)
	fset := token.NewFileSet()
	funcs, overCore = map[string]*ast.FuncDecl{}, map[string]string{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("..", dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil {
					key = recvName(d) + "." + key
				}
				funcs[key] = d
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || ts.Assign.IsValid() {
						continue
					}
					if name, ok := coreTypeName(ts.Type); ok {
						overCore[ts.Name.Name] = name
					}
				}
			}
		}
	}
	return funcs, overCore
}

// coreTypeName reports the name of the core type that x is, or wraps (a
// struct of one field of that type or a pointer to it).
func coreTypeName(x ast.Expr) (string, bool) {
	if st, ok := x.(*ast.StructType); ok {
		if st.Fields == nil || len(st.Fields.List) != 1 || len(st.Fields.List[0].Names) > 1 {
			return "", false
		}
		x = st.Fields.List[0].Type
		if s, ok := x.(*ast.StarExpr); ok {
			x = s.X
		}
	}
	if sel, ok := x.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "core" {
			return sel.Sel.Name, true
		}
	}
	return "", false
}

// recvName is the name of d's receiver type, without pointer or type
// parameters.
func recvName(d *ast.FuncDecl) string {
	x := d.Recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	switch r := x.(type) {
	case *ast.IndexExpr:
		x = r.X
	case *ast.IndexListExpr:
		x = r.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// callsMethod reports whether body calls a method or function named name
// (x.name(...)).
func callsMethod(body *ast.BlockStmt, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// callsCore reports whether body calls core's function name.
func callsCore(body *ast.BlockStmt, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "core" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// docLines is how many lines d's doc comment has.
func docLines(d *ast.FuncDecl) int {
	if d.Doc == nil {
		return 0
	}
	return len(d.Doc.List)
}

// TestOneDocPerMethod: every exported function and method of the public
// packages has a doc comment, and where a public method forwards to the
// core method of the same name (the public type defined over core's), or
// a public function to the core function of its name, the core doc is one
// line for maintainers: the user's documentation is the public one's
// alone, so the two cannot drift (issue 35).
func TestOneDocPerMethod(t *testing.T) {
	coreFuncs, _ := goFuncs(t, "internal/core")
	var missing, long []string
	pairs := 0
	for _, pkg := range publicPkgs {
		funcs, overCore := goFuncs(t, pkg)
		for key, d := range funcs {
			if !d.Name.IsExported() || (d.Recv != nil && !ast.IsExported(recvName(d))) {
				continue
			}
			if d.Doc == nil {
				missing = append(missing, pkg+"."+key)
			}
			if d.Body == nil {
				continue
			}
			// The core counterpart: for a method of a type over a core
			// type, that type's method of the same name, when the public
			// method calls a method of that name; for a function, the
			// core function of the same name, when it calls it.
			var coreKey string
			if d.Recv != nil {
				coreType, ok := overCore[recvName(d)]
				if !ok || !callsMethod(d.Body, d.Name.Name) {
					continue
				}
				coreKey = coreType + "." + d.Name.Name
			} else {
				if !callsCore(d.Body, d.Name.Name) {
					continue
				}
				coreKey = d.Name.Name
			}
			cd, ok := coreFuncs[coreKey]
			if !ok {
				continue
			}
			pairs++
			if docLines(cd) > 1 {
				long = append(long, "core."+coreKey+" (for "+pkg+"."+key+")")
			}
		}
	}
	t.Logf("%d public methods and functions forward to a core one of their name", pairs)
	// A parser change that finds no pairs would pass silently: there were
	// 112 when this test was written.
	require.Greater(t, pairs, 100, "forwarding methods and functions found")
	sort.Strings(missing)
	sort.Strings(long)
	for _, m := range missing {
		t.Errorf("%s has no doc comment", m)
	}
	for _, l := range long {
		t.Errorf("%s: a doc of more than one line; the user's doc belongs to the public one, the core one says where it is", l)
	}
}
