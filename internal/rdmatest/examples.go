package rdmatest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// DeviceOutput is the comment that, in place of "// Output:", ends an
// Example function that needs an RDMA device: the lines after it are what
// the example prints there. go test compiles such an example but does not
// run it (it has no Output comment); [RunExamples] runs it in the VM and
// checks what it prints. go doc and pkg.go.dev show the comment with the
// code.
const DeviceOutput = "Device output:"

// DeviceOutputUnordered is DeviceOutput for output whose lines may come
// in any order (go test's "Unordered output:").
const DeviceOutputUnordered = "Device output (unordered):"

// RunExamples checks the Example functions of the package in the current
// directory (the package's source directory under go test, also in the
// VM). Every example must end with either "// Output:", which go test
// runs anywhere, or "// Device output:" (see [DeviceOutput], and
// [DeviceOutputUnordered]); the latter
// must be exactly the keys of examples, which maps each example's name to
// the function. Those checks run on any host. Then, on an RDMA device
// (SkipIfNoRDMA: a skip on a plain host, a failure in the VM), each
// device example runs in turn with os.Stdout captured, and what it prints
// must be its device output, compared as go test compares an example's
// output (surrounding space trimmed).
func RunExamples(t *testing.T, examples map[string]func()) {
	t.Helper()
	want, unordered := deviceExamples(t)
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if examples[name] == nil {
			t.Errorf("%s has a %q comment but is not in the table of device examples", name, DeviceOutput)
		}
	}
	for name := range examples {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is in the table of device examples but has no %q comment", name, DeviceOutput)
		}
	}
	if t.Failed() || len(names) == 0 {
		return
	}
	SkipIfNoRDMA(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got := captureStdout(t, examples[name])
			if norm(got, unordered[name]) != norm(want[name], unordered[name]) {
				t.Errorf("%s printed\n%s\nwant\n%s", name, got, want[name])
			}
		})
	}
}

// norm is output as compared: surrounding space trimmed, and with
// unordered, its lines sorted.
func norm(out string, unordered bool) string {
	out = strings.TrimSpace(out)
	if !unordered {
		return out
	}
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// deviceExamples parses the package's test files and returns the device
// output of every Example that has one, and which of them are unordered;
// an Example with neither kind of output comment fails t.
func deviceExamples(t *testing.T) (out map[string]string, unordered map[string]bool) {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in the current directory (%v)", err)
	}
	fset := token.NewFileSet()
	out, unordered = map[string]string{}, map[string]bool{}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			kind, text := lastOutput(f, fn)
			switch kind {
			case "":
				t.Errorf("%s: %s ends with neither %q nor %q: it would never run", fset.Position(fn.Pos()), fn.Name.Name, "Output:", DeviceOutput)
			case DeviceOutput, DeviceOutputUnordered:
				out[fn.Name.Name] = text
				unordered[fn.Name.Name] = kind == DeviceOutputUnordered
			}
		}
	}
	return out, unordered
}

// lastOutput finds the output comment of fn: the last comment group in
// its body that starts with "Output:", "Unordered output:" or
// DeviceOutput, and the text after that first line.
func lastOutput(f *ast.File, fn *ast.FuncDecl) (kind, text string) {
	for _, cg := range f.Comments {
		if cg.Pos() < fn.Body.Lbrace || cg.End() > fn.Body.Rbrace {
			continue
		}
		first, rest, _ := strings.Cut(cg.Text(), "\n")
		first = strings.TrimSpace(first)
		for _, k := range []string{"Output:", "Unordered output:", DeviceOutput, DeviceOutputUnordered} {
			if strings.HasPrefix(first, k) {
				kind, text = k, rest
				if same := strings.TrimSpace(strings.TrimPrefix(first, k)); same != "" {
					text = same + "\n" + rest // "// Output: text" on one line
				}
			}
		}
	}
	if kind == "Unordered output:" {
		kind = "Output:"
	}
	return kind, text
}

// captureStdout runs f with os.Stdout going to a pipe and returns what it
// wrote.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, r)
		r.Close()
		done <- b.Bytes()
	}()
	func() {
		defer w.Close() // also if f panics: the copy ends
		f()
	}()
	return string(<-done)
}
