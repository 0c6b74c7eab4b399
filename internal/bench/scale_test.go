package bench_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/bench"
)

// TestRPMAScaleCompiles keeps testdata/rpma_scale.c building, warning-free,
// with the flags scripts/bench-scale.sh uses, against the installed
// librpma.
func TestRPMAScaleCompiles(t *testing.T) {
	buildC(t, "rpma_scale")
}

// TestScaleMatchesGoAndC: the Go benchmark, the C program and the script
// use the same connection counts and the same metric names.
func TestScaleMatchesGoAndC(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "conn", "bench_scale_linux_test.go"))
	require.NoError(t, err)
	m := regexp.MustCompile(`scaleConns = \[\]int\{([^}]*)\}`).FindSubmatch(src)
	require.NotNil(t, m, "scaleConns in conn/bench_scale_linux_test.go")
	var want []string
	for _, n := range bench.ScaleConns {
		want = append(want, fmt.Sprint(n))
	}
	require.Equal(t, strings.Join(want, ", "), string(m[1]))
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "bench-scale.sh"))
	require.NoError(t, err)
	require.Contains(t, string(script), `conns="`+strings.Join(want, " ")+`"`)

	c, err := os.ReadFile(filepath.Join("testdata", "rpma_scale.c"))
	require.NoError(t, err)
	// ns/op is testing.B's own in Go.
	require.True(t, strings.Contains(string(c), ` ns/op\t`), "C reports ns/op")
	for _, unit := range []string{"ops/s", "B/conn", "fds/conn", "setup-s"} {
		require.True(t, strings.Contains(string(src), `"`+unit+`"`), "Go reports %s", unit)
		re := regexp.MustCompile(`%[0-9.]+f ` + regexp.QuoteMeta(unit) + `(\\t|\\n|")`)
		require.True(t, re.Match(c), "C reports %s", unit)
	}
	require.Contains(t, string(c), `"BenchmarkScale/Conns%d\t`)
}

func scaleOut(lang string, ops, mem float64) string {
	var b bytes.Buffer
	if lang == "go" {
		b.WriteString("goos: linux\nBenchmarkScale/Conns1\n")
	} else {
		b.WriteString("# rpma_scale: 1 connections\n")
	}
	for _, n := range bench.ScaleConns {
		fmt.Fprintf(&b, "%s-2 \t 5000\t %.0f ns/op\t %.0f ops/s\t %.0f B/conn\t 16.00 fds/conn\t 1.5 setup-s\n",
			bench.ScaleName(n), 1e9/ops, ops, mem)
	}
	return b.String()
}

func TestWriteScaleTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	// Round 1: Go 10000, C 20000 (0.5); round 2: 12000 against 15000
	// (0.8); round 3: the C run failed (no output).
	write("go-1.txt", scaleOut("go", 10000, 40960))
	write("c-1.txt", scaleOut("c", 20000, 20480))
	write("go-2.txt", scaleOut("go", 12000, 61440))
	write("c-2.txt", scaleOut("c", 15000, 20480))
	write("go-3.txt", scaleOut("go", 14000, 51200))
	rounds, err := bench.LoadRounds(dir)
	require.NoError(t, err)
	require.Len(t, rounds, 3)
	var out bytes.Buffer
	missing := bench.WriteScaleTable(&out, rounds)
	t.Log("\n" + out.String())
	require.Len(t, missing, len(bench.ScaleConns))
	require.Contains(t, missing[0], "C BenchmarkScale/Conns1 (2 of 3 rounds)")
	// Go: median of 10000, 12000, 14000; C: of 20000, 15000; the ratio
	// is the median of the paired rounds' 0.5 and 0.8; memory in KiB.
	require.Contains(t, out.String(), "| 1 | 12000 | 17500 | 0.65 | 0.50–0.80 (2) | 50.0 | 20.0 | 16.0 | 16.0 | 1.50 | 1.50 |")
	require.Equal(t, len(bench.ScaleConns)+2, strings.Count(out.String(), "\n"))

	rounds, err = bench.LoadRounds(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, rounds)
}
